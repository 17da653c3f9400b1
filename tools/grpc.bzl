"""cc_grpc_library: C++ gRPC stubs with Debian's grpc_cpp_plugin.

The package that calls it is the proto root: `srcs` are import paths relative to it
(as a proto_library with strip_import_prefix = "" sees them), and the generated
headers are included by that same path, e.g. "exactq/v1/exactq.grpc.pb.h".
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

def cc_grpc_library(name, srcs, cc_proto_dep):
    pkg = native.package_name()
    outs = []
    for src in srcs:
        stem = src[:-len(".proto")]
        outs += [stem + ".grpc.pb.h", stem + ".grpc.pb.cc"]
    native.genrule(
        name = name + "_gen",
        srcs = srcs,
        outs = outs,
        tools = ["@com_google_protobuf//:protoc", "@com_google_protobuf//:grpc_cpp_plugin"],
        cmd = " ".join([
            "$(location @com_google_protobuf//:protoc)",
            "-I" + pkg,
            "--plugin=protoc-gen-grpc=$(location @com_google_protobuf//:grpc_cpp_plugin)",
            "--grpc_out=$(GENDIR)/" + pkg,
        ] + ["%s/%s" % (pkg, s) for s in srcs]),
    )
    cc_library(
        name = name,
        srcs = [o for o in outs if o.endswith(".cc")],
        hdrs = [o for o in outs if o.endswith(".h")],
        includes = ["."],
        deps = [cc_proto_dep, "//third_party:grpcpp", "//third_party:protobuf"],
    )
