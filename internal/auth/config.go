package auth

import (
	"fmt"
	"regexp"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is the auth section of the server (or bridge) configuration file:
//
//	auth:
//	  tokens:                      # presented as Authorization: Bearer … (or ?token= on WebSocket)
//	    - name: ci-agent
//	      scopes: [agent]
//	      env: AHP_CI_TOKEN        # the secret is read from this environment variable …
//	    - name: dashboard
//	      scopes: [watch]
//	      file: /run/secrets/ahp-dashboard   # … or from this file (trimmed; re-read on change)
//	  api_keys:                    # presented as X-API-Key: … (or ?api_key= on WebSocket)
//	    - name: harness
//	      scopes: [agent]
//	      env: AHP_HARNESS_KEY
//	  require: true                # refuse to start without credentials
//	  public_health: true          # grpc.health.v1 without credentials (default true)
//	  public_reflection: true      # gRPC reflection without credentials (default true)
//	  reload_interval: 30s         # how often token files are re-read (default 30s; <0 never)
//
// A literal secret (a token, value, secret, key or password field) is refused when the file is
// decoded, as is any unknown field, so a typo never silently disables a credential. Decoding errors
// name the entry and field but never echo a value.
type Config struct {
	// Tokens are accepted as bearer tokens.
	Tokens []CredentialConfig `yaml:"tokens"`
	// APIKeys are accepted as API keys.
	APIKeys []CredentialConfig `yaml:"api_keys"`
	// Require makes a configuration without credentials an error instead of Disabled mode. Unset
	// means "required when credentials are listed"; false with credentials listed is an error,
	// since it would read as "listed but not enforced".
	Require *bool `yaml:"require"`
	// PublicHealth lets anyone call grpc.health.v1.Health (default true): load balancers and
	// orchestrators probe without credentials.
	PublicHealth *bool `yaml:"public_health"`
	// PublicReflection lets anyone call gRPC server reflection (default true): the schema is
	// public, and grpcurl / buf curl need it.
	PublicReflection *bool `yaml:"public_reflection"`
	// ReloadInterval is how often file-based secrets are re-read (default 30s; negative
	// disables; Reload re-reads at any time).
	ReloadInterval time.Duration `yaml:"reload_interval"`
}

// CredentialConfig is one configured credential: a name, its scopes, and where its secret is.
// Exactly one of Env and File is set.
type CredentialConfig struct {
	// Name identifies the credential in logs, metrics and the audit log, never its secret.
	Name string `yaml:"name"`
	// Scopes are what the credential may do; at least one.
	Scopes []Scope `yaml:"scopes"`
	// Groups name groups the credential belongs to, for approval rules' approver lists
	// (group:<name>); optional.
	Groups []string `yaml:"groups"`
	// Env names the environment variable holding the secret, read once at start-up.
	Env string `yaml:"env"`
	// File is a file holding the secret (surrounding whitespace trimmed), re-read on reload so
	// that mounted secrets can rotate.
	File string `yaml:"file"`
}

// DefaultReloadInterval is how often token files are re-read when ReloadInterval is zero.
const DefaultReloadInterval = 30 * time.Second

// literalKeys are field names that would hold a secret in the file itself.
var literalKeys = []string{"token", "value", "secret", "key", "password", "api_key", "bearer", "bearer_token"}

var (
	configKeys     = []string{"tokens", "api_keys", "require", "public_health", "public_reflection", "reload_interval"}
	credentialKeys = []string{"name", "scopes", "groups", "env", "file"}

	namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@:-]{0,63}$`)
	envPattern  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// ParseConfig decodes a YAML document holding the auth section's fields (not nested under "auth")
// and validates it. Servers that embed Config in a larger file get the same checks from
// UnmarshalYAML and Validate.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	if err := yaml.Unmarshal(data, &c); err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

// UnmarshalYAML decodes strictly: unknown fields and literal secrets are errors naming the field,
// and no error quotes a value.
func (c *Config) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return nodeErr(n, "auth", "must be a mapping")
	}
	var out Config
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		switch k {
		case "tokens", "api_keys":
			list, err := decodeCredentials(k, v)
			if err != nil {
				return err
			}
			if k == "tokens" {
				out.Tokens = list
			} else {
				out.APIKeys = list
			}
		case "require", "public_health", "public_reflection":
			var b bool
			if err := v.Decode(&b); err != nil {
				return nodeErr(v, k, "must be true or false")
			}
			switch k {
			case "require":
				out.Require = &b
			case "public_health":
				out.PublicHealth = &b
			default:
				out.PublicReflection = &b
			}
		case "reload_interval":
			var d time.Duration
			if err := v.Decode(&d); err != nil {
				return nodeErr(v, k, `must be a duration such as "30s"`)
			}
			out.ReloadInterval = d
		default:
			return unknownKey(n.Content[i], "", k, configKeys)
		}
	}
	*c = out
	return nil
}

func decodeCredentials(field string, n *yaml.Node) ([]CredentialConfig, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, nodeErr(n, field, "must be a list")
	}
	out := make([]CredentialConfig, 0, len(n.Content))
	for i, item := range n.Content {
		where := fmt.Sprintf("%s[%d]", field, i)
		var cc CredentialConfig
		if err := cc.decode(where, item); err != nil {
			return nil, err
		}
		out = append(out, cc)
	}
	return out, nil
}

// UnmarshalYAML decodes one credential strictly (see Config.UnmarshalYAML).
func (cc *CredentialConfig) UnmarshalYAML(n *yaml.Node) error {
	return cc.decode("credential", n)
}

func (cc *CredentialConfig) decode(where string, n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return nodeErr(n, where, "must be a mapping with name, scopes and env or file")
	}
	var out CredentialConfig
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		field := where + "." + k
		switch k {
		case "name", "env", "file":
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				return nodeErr(v, field, "must be a string")
			}
			switch k {
			case "name":
				out.Name = v.Value
			case "env":
				out.Env = v.Value
			default:
				out.File = v.Value
			}
		case "scopes":
			if v.Kind != yaml.SequenceNode {
				return nodeErr(v, field, "must be a list such as [agent]")
			}
			for j, s := range v.Content {
				if s.Kind != yaml.ScalarNode {
					return nodeErr(s, fmt.Sprintf("%s[%d]", field, j), "must be agent, watch, admin or approve")
				}
				out.Scopes = append(out.Scopes, Scope(s.Value))
			}
		case "groups":
			if v.Kind != yaml.SequenceNode {
				return nodeErr(v, field, "must be a list such as [oncall]")
			}
			for j, s := range v.Content {
				if s.Kind != yaml.ScalarNode {
					return nodeErr(s, fmt.Sprintf("%s[%d]", field, j), "must be a group name")
				}
				out.Groups = append(out.Groups, s.Value)
			}
		default:
			return unknownKey(n.Content[i], where+".", k, credentialKeys)
		}
	}
	*cc = out
	return nil
}

func unknownKey(k *yaml.Node, prefix, key string, known []string) error {
	if slices.Contains(literalKeys, key) {
		return nodeErr(k, prefix+key, "a literal secret in the configuration is refused: put it in an environment variable (env:) or a file (file:)")
	}
	return nodeErr(k, prefix+key, fmt.Sprintf("unknown field (known: %v)", known))
}

// nodeErr never includes the node's value: it may be a secret in the wrong place.
func nodeErr(n *yaml.Node, field, msg string) error {
	return fmt.Errorf("auth config line %d: %s: %s", n.Line, field, msg)
}

// Validate checks the configuration without reading any secret: names, scopes, exactly one
// source per credential, unique names, and the require rule.
func (c Config) Validate() error {
	names := map[string]string{}
	check := func(field string, list []CredentialConfig) error {
		for i, cc := range list {
			where := fmt.Sprintf("%s[%d]", field, i)
			if !namePattern.MatchString(cc.Name) {
				// The name is not echoed: an invalid one may be a pasted secret.
				return fmt.Errorf("auth config: %s.name: required; 1 to 64 letters, digits or . _ @ : - (starting with a letter or digit)", where)
			}
			where = fmt.Sprintf("%s (%q)", where, cc.Name)
			if prev, dup := names[cc.Name]; dup {
				return fmt.Errorf("auth config: %s: name already used by %s", where, prev)
			}
			names[cc.Name] = where
			if len(cc.Scopes) == 0 {
				return fmt.Errorf("auth config: %s: scopes: at least one of agent, watch, admin, approve is required", where)
			}
			for j, s := range cc.Scopes {
				if !s.Valid() {
					return fmt.Errorf("auth config: %s: scopes[%d]: must be agent, watch, admin or approve", where, j)
				}
			}
			for j, g := range cc.Groups {
				if !namePattern.MatchString(g) {
					return fmt.Errorf("auth config: %s: groups[%d]: 1 to 64 letters, digits or . _ @ : - (starting with a letter or digit)", where, j)
				}
			}
			switch {
			case cc.Env != "" && cc.File != "":
				return fmt.Errorf("auth config: %s: set env or file, not both", where)
			case cc.Env == "" && cc.File == "":
				return fmt.Errorf("auth config: %s: env or file is required (a literal secret is refused)", where)
			case cc.Env != "" && !envPattern.MatchString(cc.Env):
				// Not echoed: a secret pasted into env: is the likeliest mistake here.
				return fmt.Errorf("auth config: %s: env: not an environment variable name (letters, digits, _); it must name the variable holding the secret, not be the secret", where)
			}
		}
		return nil
	}
	if err := check("tokens", c.Tokens); err != nil {
		return err
	}
	if err := check("api_keys", c.APIKeys); err != nil {
		return err
	}
	n := len(c.Tokens) + len(c.APIKeys)
	if c.Require != nil {
		if *c.Require && n == 0 {
			return fmt.Errorf("auth config: require is true but no tokens or api_keys are configured")
		}
		if !*c.Require && n > 0 {
			return fmt.Errorf("auth config: require is false but credentials are configured; remove them to run without authentication")
		}
	}
	return nil
}

func (c Config) credentialCount() int { return len(c.Tokens) + len(c.APIKeys) }

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}
