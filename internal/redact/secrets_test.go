package redact_test

// Fake secrets in the shapes the detectors know. None of them is real.

// plant is one secret as it appears in text: the text around it, the part that must disappear and
// the kind the report must name.
type plant struct {
	kind   string
	text   string // contains secret
	secret string
}

var plants = []plant{
	{"aws_access_key_id", "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"},
	{"aws_access_key_id", "key=ASIAY34FZKBOKMUTVV7A;", "ASIAY34FZKBOKMUTVV7A"},
	{"aws_secret_access_key", "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"aws_secret_access_key", "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"gcp_api_key", "https://maps.googleapis.com/maps/api/geocode/json?key=AIzac7Tvo_hBKqFYY_kv5ZJr3J1TWDtkwtDDb-x", "AIzac7Tvo_hBKqFYY_kv5ZJr3J1TWDtkwtDDb-x"},
	{"gcp_oauth_token", "gcloud says ya29.h5Xj8TPQxjq4i9DoV8gz4FkQ1okTBGzvAmwufUxb", "ya29.h5Xj8TPQxjq4i9DoV8gz4FkQ1okTBGzvAmwufUxb"},
	{"private_key", `{"type": "service_account", "project_id": "p", "private_key_id": "1a2b", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n-----END PRIVATE KEY-----\n", "client_email": "sa@p.iam.gserviceaccount.com"}`, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"},
	{"private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----", "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK"},
	{"private_key", "cat id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"},
	{"azure_key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net", "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq"},
	{"azure_key", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=q5Jt2mG9x3Kp8Lr1Vw6Zs4Bn7Yc0Hd2Fa5Ue8Ti3Ro1=", "q5Jt2mG9x3Kp8Lr1Vw6Zs4Bn7Yc0Hd2Fa5Ue8Ti3Ro1"},
	{"azure_sas_signature", "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&se=2026-01-01&sr=b&sp=r&sig=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA%3D%3D", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA"},
	{"github_token", "git clone https://ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d@github.com/o/r.git", "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"},
	{"github_token", "GH_TOKEN gho_KLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFR", "gho_KLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFR"},
	{"github_token", "ghu_KLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFR ghs_KLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFR", "KLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFR"},
	{"github_token", "ghr_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d", "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"},
	{"github_token", "using 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 now", "IBXuDL7DxtpYlSXpfKtHF4_vUCsMehGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8rESQedUStPKR0CsTy4Qw"},
	{"gitlab_token", "glpat-XgGCJbW56eCuNGMGmSrC", "XgGCJbW56eCuNGMGmSrC"},
	{"npm_token", "//registry.npmjs.org/:_authToken=npm_GIZEG8pSH4487q7J58m1CiAhzCueQpBenQtY", "npm_GIZEG8pSH4487q7J58m1CiAhzCueQpBenQtY"},
	{"slack_token", "SLACK=xoxb-440268599528-9078666617603-enCkhvMdgaKjIg8xNbe3nNyj", "xoxb-440268599528-9078666617603-enCkhvMdgaKjIg8xNbe3nNyj"},
	{"slack_token", "xoxp-440268599528-9078666617603-enCkhvMdgaKj", "440268599528-9078666617603-enCkhvMdgaKj"},
	{"slack_webhook", "curl -X POST https://hooks.slack.com/services/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 -d '{}'", "T0A1B2C3D/B0A1B2C3D/Ab12Cd34Ef56Gh78Ij90Kl12"},
	{"stripe_key", "stripe.api_key = 'sk_live_Oq9wMxEhh2FDEEtfjgVvVqE1'", "sk_live_Oq9wMxEhh2FDEEtfjgVvVqE1"},
	{"stripe_key", "rk_live_SkHbn88HxjSI6bWHtP3fS2qH", "rk_live_SkHbn88HxjSI6bWHtP3fS2qH"},
	{"openai_key", "OpenAI(api_key=\"sk-proj-x6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmSM\")", "sk-proj-x6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmSM"},
	{"openai_key", "key: sk-x6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmSM", "x6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmSM"},
	{"anthropic_key", "x-api-key: sk-ant-api03-S5SUkCnD8zRA9a9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1qhT61qtc4xatws8phP9nhFyJf", "S5SUkCnD8zRA9a9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1qhT61qtc4xatws8phP9nhFyJf"},
	{"jwt", "token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"},
	{"url_password", "DATABASE_URL=postgres://admin:Sup3rS3cretPw@db.internal:5432/app", "Sup3rS3cretPw"},
	{"url_password", "redis://:R3disOnlyPw@cache:6379/0", "R3disOnlyPw"},
	{"authorization", "curl -H 'Authorization: Bearer 4f9a8b7c6d5e4f3a2b1c' https://api", "4f9a8b7c6d5e4f3a2b1c"},
	{"authorization", `{"headers": {"authorization": "token T0kenValu3Xyz"}}`, "T0kenValu3Xyz"},
	{"authorization", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="},
	{"bearer_token", "use Bearer abcdef.ghijkl.mnopqr9 for the call", "abcdef.ghijkl.mnopqr9"},
	{"basic_auth", "header was Basic YWRtaW46aHVudGVyMg==", "YWRtaW46aHVudGVyMg=="},
	{"cookie", "Cookie: session=7d9f8a6b5c4e3d2f1a0b; theme=dark", "7d9f8a6b5c4e3d2f1a0b"},
	{"secret_assignment", "api_key=9f8e7d6c5b4a39281706", "9f8e7d6c5b4a39281706"},
	{"secret_assignment", "MY_SERVICE_TOKEN=plainwordsecretvalue make deploy", "plainwordsecretvalue"},
	{"secret_assignment", "db_password: correct-horse-battery", "correct-horse-battery"},
	{"secret_assignment", `{"clientSecret": "CorrectHorseBatteryStaple"}`, "CorrectHorseBatteryStaple"},
	{"secret_assignment", `{\"password\":\"EscapedJsonPw\"}`, "EscapedJsonPw"},
	{"secret_assignment", "secret='single quoted value'", "single quoted value"},
	{"secret_assignment", "https://example.com/cb?access_token=qwertyuiop123&state=1", "qwertyuiop123"},
	{"secret_flag", "mysqladmin --password hunter2hunter2 status", "hunter2hunter2"},
	{"secret_flag", "gh auth login --with-token --token 'OpaqueTokenValue'", "OpaqueTokenValue"},
}

// ordinary strings that must come out unchanged.
var ordinary = []string{
	"git push origin main",
	"ls -la",
	"cd /home/user/project && make test",
	"go test -race ./... -run TestPasswordReset",
	"python -m pytest -k test_password_reset",
	"npm install --save-dev typescript",
	"docker run -p 8080:8080 -e MODE=prod image:latest",
	"ssh git@github.com:org/repo.git",
	"https://github.com/ahp-gateway/ahp/blob/main/README.md",
	"http://localhost:8080/v1/intercept?page=2&limit=50",
	"0190b3a4-5c6d-7e8f-9a0b-1c2d3e4f5a6b",
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"commit 9cd2d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f7a8b",
	"SGVsbG8sIHdvcmxkIQo=",
	"max_tokens=1024 temperature=0.2",
	"token_type: bearer",
	"The basic idea is simple: the bearer of a token may use it.",
	"Bearer tokens are described in RFC 6750",
	"Basic authentication sends credentials in a header",
	"see docs/auth.md and the author: Jane",
	"task-2024-11-29-backup-of-the-database-cluster",
	"disk-usage-report-for-2024-volume-7",
	"SELECT id, name FROM users WHERE id = 1",
	"echo $HOME; grep -rn 'TODO' internal/",
	"rm -rf ./build && mkdir build",
	"kubectl get secrets -n prod",
	"the password reset flow sends an email",
	"--password-file /run/secrets/db",
	"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ3\n-----END CERTIFICATE-----",
	"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
	"日本語のテキストと emoji 🙂 are fine",
}
