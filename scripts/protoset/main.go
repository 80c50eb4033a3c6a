// Command protoset writes a FileDescriptorSet of the googleapis protos that
// wunder's Go dependencies carry compiled in (google/api: annotations,
// client, field_behavior, http, ...; google/rpc: status, error_details),
// for protoc --descriptor_set_in. scripts/a2a-tck.sh uses it to build the
// Python modules of googleapis-common-protos, which the A2A TCK imports and
// Debian 12 does not package, without fetching anything.
//
//	go run ./scripts/protoset -o set.pb
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	_ "google.golang.org/genproto/googleapis/api/annotations"
	_ "google.golang.org/genproto/googleapis/rpc/errdetails"
	_ "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

func main() {
	out := flag.String("o", "protoset.pb", "the file to write")
	flag.Parse()
	set := &descriptorpb.FileDescriptorSet{}
	protoregistry.GlobalFiles.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		// The well-known types come from protoc's own include directory.
		if p := f.Path(); strings.HasPrefix(p, "google/api/") || strings.HasPrefix(p, "google/rpc/") {
			set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
		}
		return true
	})
	b, err := proto.Marshal(set)
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "protoset:", err)
		os.Exit(1)
	}
	for _, f := range set.File {
		fmt.Println(f.GetName())
	}
}
