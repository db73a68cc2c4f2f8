module github.com/recoveryd/recoveryd/stubs/go

go 1.23.0

require (
	google.golang.org/grpc v1.75.1
	google.golang.org/protobuf v1.36.11
)

require (
	golang.org/x/net v0.41.0 // indirect
	golang.org/x/sys v0.33.0 // indirect
	golang.org/x/text v0.26.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250707201910-8d1bb00bc6a7 // indirect
)
