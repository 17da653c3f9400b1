"""cuda_library: compile .cu files with nvcc and wrap the objects in a cc_library.

Device code is compiled with --fmad=false (docs/design.md rule 2: the GPU performs the CPU's
IEEE operations in the CPU's order) and host code inside .cu files with
-ffp-contract=off. Development builds target sm_90 (H100/H200); `--config=cuda_release`
adds machine code for sm_75, sm_80, sm_86 and sm_89. PTX for compute_90 is always
embedded so newer GPUs can JIT it. Targets are skipped under `--config=nocuda` and on
machines without nvcc.
"""

load("@cuda//:defs.bzl", "CUDA_AVAILABLE")

_DEV_ARCHS = ["90"]
_RELEASE_ARCHS = ["75", "80", "86", "89", "90"]

def _nvcc_compile_impl(ctx):
    archs = _RELEASE_ARCHS if ctx.var.get("cuda_arch", "") == "release" else _DEV_ARCHS
    cc_infos = [d[CcInfo] for d in ctx.attr.deps if CcInfo in d]
    headers = depset(ctx.files.hdrs, transitive = [c.compilation_context.headers for c in cc_infos])
    includes = ["."]
    defines = []
    for c in cc_infos:
        cc = c.compilation_context
        includes += cc.quote_includes.to_list() + cc.includes.to_list() + cc.system_includes.to_list()
        defines += cc.defines.to_list()
    gencode = []
    for a in archs:
        gencode.append("-gencode=arch=compute_%s,code=sm_%s" % (a, a))
    gencode.append("-gencode=arch=compute_90,code=compute_90")
    nvcc = ctx.file._nvcc
    outs = []
    for src in ctx.files.srcs:
        out = ctx.actions.declare_file("_cuda_objs/%s/%s.o" % (ctx.label.name, src.basename))
        args = [
            "-c",
            "-std=c++17",
            "-O3",
            "--fmad=false",
            "-prec-div=true",
            "-prec-sqrt=true",
            "-ftz=false",
            "-Xcompiler=-fPIC,-ffp-contract=off",
            "-Werror=all-warnings",
        ] + gencode + ["-I" + i for i in includes] + ["-D" + d for d in defines] + ctx.attr.copts + [
            src.path,
            "-o",
            out.path,
        ]

        # nvcc finds its include/ and nvcc.profile relative to its real path. Its
        # intermediate files go to a folder of this action's own: nvcc names them by its
        # process id, which is the same in every sandbox (its own PID namespace), and
        # the sandboxes share /tmp, so two compiles at once overwrote each other's.
        ctx.actions.run_shell(
            inputs = depset([src] + ctx.files._nvcc_files, transitive = [headers]),
            outputs = [out],
            command = ('tmp=$(mktemp -d) && trap \'rm -rf "$tmp"\' EXIT && TMPDIR="$tmp" ' +
                       '"$(readlink -f %s)" "$@"') % nvcc.path,
            arguments = args,
            mnemonic = "Nvcc",
            progress_message = "nvcc %s" % src.short_path,
            use_default_shell_env = True,
        )
        outs.append(out)
    return [DefaultInfo(files = depset(outs))]

_nvcc_compile = rule(
    implementation = _nvcc_compile_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".cu"]),
        "hdrs": attr.label_list(allow_files = True),
        "deps": attr.label_list(),
        "copts": attr.string_list(),
        "_nvcc": attr.label(default = "@cuda//:bin/nvcc", allow_single_file = True),
        "_nvcc_files": attr.label(default = "@cuda//:nvcc_files"),
    },
)

def cuda_compatible():
    """target_compatible_with value for targets that need CUDA."""
    if not CUDA_AVAILABLE:
        return ["//:incompatible"]
    return select({
        "//:cuda_off": ["//:incompatible"],
        "//conditions:default": [],
    })

def cuda_library(name, srcs, hdrs = [], deps = [], copts = [], **kwargs):
    """A cc_library made of nvcc-compiled .cu files, linked with the static CUDA runtime."""
    _nvcc_compile(
        name = name + "_objs",
        srcs = srcs,
        hdrs = hdrs,
        deps = deps + ["@cuda//:headers"],
        copts = copts,
        target_compatible_with = cuda_compatible(),
        visibility = ["//visibility:private"],
        testonly = kwargs.get("testonly", False),
    )
    native.cc_library(
        name = name,
        srcs = [":" + name + "_objs"],
        hdrs = hdrs,
        deps = deps + ["@cuda//:cudart_static"],
        target_compatible_with = cuda_compatible(),
        alwayslink = True,
        # No .so of device objects: a test linked dynamically would not see cudart_static
        # from it (undefined __cudaPopCallConfiguration).
        linkstatic = True,
        **kwargs
    )

def if_cuda(if_true, if_false = []):
    """`if_true` when CUDA code is built (nvcc present and not --config=nocuda), else `if_false`."""
    if not CUDA_AVAILABLE:
        return if_false
    return select({
        "//:cuda_off": if_false,
        "//conditions:default": if_true,
    })

def cuda_test(name, **kwargs):
    """A cc_test of CUDA code: linked statically (the kernels' objects must see
    cudart_static) and skipped where CUDA code is not built. On a machine without a GPU
    the test itself skips with its reason."""
    native.cc_test(
        name = name,
        linkstatic = True,
        target_compatible_with = cuda_compatible(),
        **kwargs
    )
