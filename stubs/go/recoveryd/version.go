package recoveryd

// Version of this module: the project's VERSION file, and the tag
// stubs/go/vVERSION that `go get github.com/recoveryd/recoveryd/stubs/go@vVERSION`
// resolves (a module in a subdirectory is tagged with its path as prefix).
const Version = "0.1.0"
