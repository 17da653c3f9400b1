"""Repository rules that expose Debian's system libraries and CUDA to Bazel offline.

pkg_config_repo: one cc_library per entry of `modules`, carrying the linkopts (and -D
defines) that pkg-config reports; `<name>_static` links the same libraries statically.
Headers come from the compiler's default search path (adding /usr/include with
`includes` would break #include_next).
system_files_repo: symlinks to system files plus a BUILD file.
cuda_repo: the CUDA toolkit at $CUDA_PATH (default /usr/local/cuda), or a stub whose
`available` flag is false when nvcc is missing, so that `--config=nocuda` builds work on
machines without CUDA.
"""

def _pkg_config(ctx, args):
    result = ctx.execute(["pkg-config"] + args)
    if result.return_code != 0:
        fail("pkg-config %s failed: %s" % (" ".join(args), result.stderr))
    return [f for f in result.stdout.strip().split(" ") if f]

def _quote_list(items):
    return "[" + ", ".join(['"%s"' % i for i in items]) + "]"

def _pkg_config_repo_impl(ctx):
    build = ['package(default_visibility = ["//visibility:public"])', ""]
    for name, modules in ctx.attr.modules.items():
        mods = [m for m in modules.split(" ") if m]
        cflags = _pkg_config(ctx, ["--cflags"] + mods)
        libs = _pkg_config(ctx, ["--libs"] + mods)
        static_libs = _pkg_config(ctx, ["--libs", "--static"] + mods)
        defines = [f[2:] for f in cflags if f.startswith("-D")]
        libs = libs + ctx.attr.extra_libs.get(name, "").split(" ")
        libs = [l for l in libs if l]
        static_only = [l for l in static_libs if l.startswith("-l")]
        static_link = ["-Wl,-Bstatic"] + static_only + ["-Wl,-Bdynamic", "-lpthread", "-ldl", "-lrt", "-lm"]
        build.append('cc_library(name = "%s", defines = %s, linkopts = %s)' % (name, _quote_list(defines), _quote_list(libs)))
        build.append('cc_library(name = "%s_static", defines = %s, linkopts = %s)' % (name, _quote_list(defines), _quote_list(static_link)))
        build.append("")
    ctx.file("WORKSPACE", 'workspace(name = "%s")\n' % ctx.name)
    ctx.file("BUILD.bazel", "\n".join(build))

pkg_config_repo = repository_rule(
    implementation = _pkg_config_repo_impl,
    attrs = {
        "modules": attr.string_dict(mandatory = True),
        "extra_libs": attr.string_dict(),
    },
)

def _system_files_repo_impl(ctx):
    for dest, src in ctx.attr.symlinks.items():
        ctx.symlink(src, dest)
    ctx.file("WORKSPACE", 'workspace(name = "%s")\n' % ctx.name)
    ctx.symlink(ctx.attr.build_file, "BUILD.bazel")

system_files_repo = repository_rule(
    implementation = _system_files_repo_impl,
    attrs = {
        "symlinks": attr.string_dict(),
        "build_file": attr.label(mandatory = True),
    },
)

def _cuda_repo_impl(ctx):
    root = ctx.os.environ.get("CUDA_PATH", "/usr/local/cuda")
    ctx.file("WORKSPACE", 'workspace(name = "%s")\n' % ctx.name)
    if ctx.path(root + "/bin/nvcc").exists:
        for entry in ["bin", "include", "lib64", "nvvm"]:
            ctx.symlink(root + "/" + entry, entry)
        ctx.symlink(ctx.attr.build_file, "BUILD.bazel")
        ctx.file("defs.bzl", "CUDA_AVAILABLE = True\n")
    else:
        ctx.file("bin/nvcc", "#!/bin/sh\necho 'CUDA is not installed' >&2\nexit 1\n", executable = True)
        ctx.file("BUILD.bazel", 'package(default_visibility = ["//visibility:public"])\n' +
                                'exports_files(["bin/nvcc", "defs.bzl"])\n' +
                                'cc_library(name = "headers")\ncc_library(name = "cudart_static")\n' +
                                'filegroup(name = "nvcc_files")\n')
        ctx.file("defs.bzl", "CUDA_AVAILABLE = False\n")

cuda_repo = repository_rule(
    implementation = _cuda_repo_impl,
    attrs = {"build_file": attr.label(mandatory = True)},
    environ = ["CUDA_PATH"],
)

_STATIC_PREFIX_ENV = "EXACTQ_FFMPEG_STATIC"

def _static_prefix_repo_impl(ctx):
    """A static library built under a prefix named by an environment variable."""
    prefix = ctx.os.environ.get(_STATIC_PREFIX_ENV, "")
    ctx.file("WORKSPACE", 'workspace(name = "%s")\n' % ctx.name)
    pc_dir = prefix + "/lib/pkgconfig"
    if not prefix or not ctx.path(pc_dir).exists:
        # Selecting this library without the prefix fails the build by name.
        ctx.file("BUILD.bazel", 'package(default_visibility = ["//visibility:public"])\n' +
                                'cc_library(name = "%s", target_compatible_with = ["@exactq//:incompatible"])\n' % ctx.attr.library)
        return
    result = ctx.execute(["pkg-config", "--static", "--libs"] + ctx.attr.modules.split(" "),
                         environment = {"PKG_CONFIG_PATH": pc_dir, "PKG_CONFIG_LIBDIR": pc_dir})
    if result.return_code != 0:
        fail("pkg-config under %s failed: %s" % (pc_dir, result.stderr))
    flags = [f for f in result.stdout.strip().split(" ") if f]

    # Libraries the prefix holds link statically; the rest (libm, libdl, ...) from the system.
    own = [f for f in flags if f.startswith("-l") and ctx.path("%s/lib/lib%s.a" % (prefix, f[2:])).exists]
    system = [f for f in flags if f not in own and not f.startswith("-L")]
    linkopts = ["-L%s/lib" % prefix, "-Wl,-Bstatic"] + own + ["-Wl,-Bdynamic"] + system
    ctx.file("BUILD.bazel", 'package(default_visibility = ["//visibility:public"])\n' +
                            'cc_library(name = "%s", linkopts = %s)\n' % (ctx.attr.library, _quote_list(linkopts)))

# static_prefix_repo: `library` links the pkg-config `modules` found under
# $EXACTQ_FFMPEG_STATIC/lib/pkgconfig statically (bench/device/build_ffmpeg.sh makes one). Headers
# stay the system's: the prefix must hold the same version as the system's -dev package.
static_prefix_repo = repository_rule(
    implementation = _static_prefix_repo_impl,
    attrs = {
        "library": attr.string(mandatory = True),
        "modules": attr.string(mandatory = True),
    },
    environ = [_STATIC_PREFIX_ENV],
)
