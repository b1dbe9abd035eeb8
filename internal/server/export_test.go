package server

// JSONCodecOptions are the server's codec options (its JSON codecs and the shared-encoding
// wrappers), for benchmarks that put them in front of another handler.
var JSONCodecOptions = jsonCodecs
