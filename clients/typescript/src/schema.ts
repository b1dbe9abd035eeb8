// The generated ahp.v1 messages, enums and service descriptors (protoc-gen-es), re-exported so a
// caller imports everything from the package root. buf/validate stays internal: it only carries the
// validation options.

export * from "../gen/ahp/v1/context_pb.js";
export * from "../gen/ahp/v1/contract_pb.js";
export * from "../gen/ahp/v1/decision_pb.js";
export * from "../gen/ahp/v1/event_pb.js";
export * from "../gen/ahp/v1/harness_pb.js";
export * from "../gen/ahp/v1/hooks_pb.js";
export * from "../gen/ahp/v1/options_pb.js";
export * from "../gen/ahp/v1/service_pb.js";
export * from "../gen/ahp/v1/typed_pb.js";
