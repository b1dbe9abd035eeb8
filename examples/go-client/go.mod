module github.com/ahp-gateway/ahp/examples/go-client

go 1.26.8

require (
	connectrpc.com/connect v1.21.1
	github.com/ahp-gateway/ahp v0.0.0
	google.golang.org/protobuf v1.36.12
)

require buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go v1.36.12-20260825204119-511051f7f437.2 // indirect

// Builds against this checkout. Outside it, drop the replace and require a release of the module.
replace github.com/ahp-gateway/ahp => ../..
