"""deploy/container/Dockerfile, checked where no container engine runs: the CUDA toolkit
comes from a build argument whose default is NVIDIA's CUDA devel image, the build stage
runs the README's commands on Debian 12 with --config=cuda_release by default (and
refuses to build a GPU image without nvcc), the CPU-only variant is a pair of build
arguments, the runtime stage is debian:12-slim with the packages build-rootfs.sh
derives, a non-root numeric user, exactqd as entrypoint, a CUDA cache path for the
read-only root filesystem, and the ports it exposes are exactqd's defaults (read from
the real binary)."""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dockerfile  # noqa: E402
from server_flags import port_of, server_flags  # noqa: E402

DOCKERFILE = "deploy/container/Dockerfile"
BUILD_ROOTFS = "deploy/container/build-rootfs.sh"


class ContainerRecipeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stages = dockerfile.parse(DOCKERFILE)
        cls.flags = server_flags("server/exactqd")

    def test_stages_cuda_toolkit_then_debian_12(self):
        self.assertEqual(len(self.stages), 3, self.stages)
        cuda, build, runtime = self.stages
        self.assertEqual((cuda["image"], cuda["name"]), ("${CUDA_IMAGE}", "cuda"))
        self.assertEqual(build["image"], "debian:12")
        self.assertEqual(build["name"], "build")
        self.assertEqual(runtime["image"], "debian:12-slim")

    def test_cuda_base_is_a_build_argument_naming_nvidias_devel_image(self):
        default = dockerfile.global_args(DOCKERFILE).get("CUDA_IMAGE")
        self.assertRegex(default or "", r"^nvidia/cuda:\d+\.\d+(\.\d+)?-devel-",
                         "the default CUDA base is NVIDIA's CUDA devel image")
        build = self.stages[1]
        copies = dockerfile.all_of(build, "COPY")
        self.assertIn("--from=cuda /usr/local/cuda/ /usr/local/cuda/", copies)
        # The cuda stage leaves a directory even in an image without CUDA (CPU variant).
        self.assertIn("mkdir -p /usr/local/cuda/", " ".join(dockerfile.all_of(self.stages[0], "RUN")))

    def test_gpu_build_by_default_and_the_cpu_variant_kept(self):
        build = self.stages[1]
        args = dict(a.partition("=")[::2] for a in dockerfile.all_of(build, "ARG"))
        self.assertEqual(args.get("BAZEL_CONFIG"), "cuda_release")
        run = " && ".join(dockerfile.all_of(build, "RUN"))
        self.assertIn("--config=${BAZEL_CONFIG}", run)
        # A GPU image never silently lacks the CUDA engine.
        self.assertRegex(run, r'"\$\{BAZEL_CONFIG\}" = cuda_release \] && \[ ! -x /usr/local/cuda/bin/nvcc \]')
        # The configurations the arguments name exist in .bazelrc.
        with open(".bazelrc", encoding="utf-8") as f:
            bazelrc = f.read()
        for config in ("cuda_release", "nocuda"):
            self.assertRegex(bazelrc, rf"(?m)^build:{config} ")
        # The header documents the CPU-only variant's arguments.
        with open(DOCKERFILE, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("--build-arg CUDA_IMAGE=debian:12", text)
        self.assertIn("--build-arg BAZEL_CONFIG=nocuda", text)
        self.assertIn("REVISION", args)
        self.assertIn('-DEXACTQ_REVISION=\\"${REVISION}\\"', run)

    def test_build_stage_runs_the_readme_commands_and_the_rootfs_script(self):
        run = " && ".join(dockerfile.all_of(self.stages[1], "RUN"))
        steps = [s.strip() for s in run.split("&&")]
        setup = next(i for i, s in enumerate(steps) if s == "tools/setup-debian.sh")
        build = next(i for i, s in enumerate(steps) if s.startswith("bazel build"))
        stage = next(i for i, s in enumerate(steps) if s.startswith(BUILD_ROOTFS))
        self.assertLess(setup, build)
        self.assertLess(build, stage)
        self.assertIn("//server:exactqd", steps[build])
        self.assertIn("//client:exactq", steps[build])
        # The README's build command (as tools/demo.sh runs it), configuration, revision
        # and extra flags aside.
        self.assertEqual(re.sub(r"--config=\$\{BAZEL_CONFIG\} --copt=\S+ \$\{BAZEL_FLAGS\} ", "", steps[build]),
                         "bazel build //server:exactqd //client:exactq")
        self.assertTrue(os.access(BUILD_ROOTFS, os.X_OK), f"{BUILD_ROOTFS} is not executable")

    def test_runtime_installs_exactly_the_derived_packages(self):
        runtime = self.stages[2]
        copies = dockerfile.all_of(runtime, "COPY")
        self.assertTrue(any(c.startswith("--from=build /staging/runtime-packages.txt") for c in copies),
                        copies)
        run = " ".join(dockerfile.all_of(runtime, "RUN"))
        self.assertRegex(run, r"runtime-packages\.txt\s+apt-get install -y --no-install-recommends")
        self.assertIn("rm -rf /var/lib/apt/lists/*", run)
        # Nothing else is installed by name.
        for install in re.findall(r"apt-get install[^&]*", run):
            words = [w for w in install.split()[2:] if not w.startswith("-")]
            self.assertEqual(words, [], f"packages named by hand: {words}")
        # The binaries come from where build-rootfs.sh stages them.
        binaries = [c for c in copies if "/usr/local/bin/" in c]
        self.assertEqual(len(binaries), 1, copies)
        for name in ("exactqd", "exactq"):
            self.assertIn(f"/staging/rootfs/usr/local/bin/{name}", binaries[0])
        with open(BUILD_ROOTFS, encoding="utf-8") as f:
            script = f.read()
        self.assertIn('"$out/rootfs/usr/local/bin/exactqd"', script)
        self.assertIn('"$out/runtime-packages.txt"', script)

    def test_non_root_numeric_user(self):
        runtime = self.stages[2]
        users = dockerfile.all_of(runtime, "USER")
        self.assertEqual(len(users), 1, users)
        uid, _, gid = users[0].partition(":")
        self.assertTrue(uid.isdigit() and gid.isdigit(),
                        "USER must be numeric so that runAsNonRoot can verify it")
        self.assertNotEqual(int(uid), 0)
        run = " ".join(dockerfile.all_of(runtime, "RUN"))
        self.assertRegex(run, rf"useradd [^&]*--uid {uid} ")
        self.assertRegex(run, rf"groupadd [^&]*--gid {gid} ")
        # USER comes after everything that needs root.
        keywords = [k for k, _ in runtime["instructions"]]
        self.assertGreater(keywords.index("USER"), max(i for i, k in enumerate(keywords) if k == "RUN"))

    def test_entrypoint_is_exactqd(self):
        entrypoints = dockerfile.all_of(self.stages[2], "ENTRYPOINT")
        self.assertEqual(len(entrypoints), 1)
        self.assertEqual(dockerfile.exec_form(entrypoints[0]), ["/usr/local/bin/exactqd"],
                         "exec form, so that exactqd is PID 1 and receives SIGTERM")

    def test_exposed_ports_are_the_server_defaults(self):
        exposed = " ".join(dockerfile.all_of(self.stages[2], "EXPOSE")).split()
        expected = {str(port_of(self.flags["listen"])), str(port_of(self.flags["metrics_listen"]))}
        self.assertEqual(set(exposed), expected)

    def test_no_gpu_is_granted_by_the_image(self):
        env = " ".join(dockerfile.all_of(self.stages[2], "ENV"))
        self.assertNotIn("NVIDIA_VISIBLE_DEVICES", env,
                         "the device plugin grants GPUs per pod; the image must not grant all")

    def test_cuda_cache_has_a_path_outside_the_read_only_root(self):
        env = " ".join(dockerfile.all_of(self.stages[2], "ENV"))
        self.assertIn("CUDA_CACHE_PATH=/var/cache/exactq/cuda", env)

    def test_dockerignore_keeps_build_outputs_out(self):
        with open(DOCKERFILE + ".dockerignore", encoding="utf-8") as f:
            patterns = {l.strip() for l in f if l.strip() and not l.startswith("#")}
        self.assertIn("bazel-*", patterns)


if __name__ == "__main__":
    unittest.main(verbosity=2)
