# SPDX-License-Identifier: BSD-3-Clause
# Spack recipe for fabshmem, kept in fabshmem's own tree (docs/packaging.md, "Spack", says how
# to use it).
# tools/spack/recipe.sh (under `make check`) checks it against configure.ac: options, dependencies
# and their versions, the release version.
import os

try:  # Spack >= 1.0: the build systems come with the builtin package repository
    from spack_repo.builtin.build_systems.autotools import AutotoolsPackage
    from spack_repo.builtin.build_systems.cuda import CudaPackage

    _LANGUAGE_DEPENDENCIES = True
except ImportError:  # Spack 0.x: spack.package exports them
    _LANGUAGE_DEPENDENCIES = False

from spack.package import *

# This file is <top>/tools/spack/spack_repo/fabshmem/packages/fabshmem/package.py: <top> is the
# source tree it came with, where `make dist` writes the release tarball and whose git
# repository holds the branch main.
_TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 6))


class Fabshmem(AutotoolsPackage, CudaPackage):
    """fabshmem: the OpenSHMEM 1.6 API over libfabric, bootstrapped by PMIx.

    Jobs start under any PMIx launcher (Open MPI's mpirun, prterun, srun --mpi=pmix); the
    package depends on none, and fabshmem-oshrun looks `mpirun` up on PATH when it runs
    (OSHRUN_LAUNCHER names another)."""

    # No public download yet: the release tarball is the one `make dist` writes into the
    # source tree, and main is that tree's own git branch. When fabshmem is published, url
    # becomes the public tarball's address and each release gets version("X.Y.Z", sha256=...).
    url = f"file://{_TOP}/fabshmem-0.1.0.tar.gz"
    git = f"file://{_TOP}"

    license("BSD-3-Clause")

    version("main", branch="main")
    # No sha256: every `make dist` makes a new tarball (install with --no-checksum).
    version("0.1.0")

    # Spack >= 1.0 gives a package its compilers through these. Spack 0.x takes the compiler
    # from the spec (%gcc), and the older ones have no package that provides "c".
    if _LANGUAGE_DEPENDENCIES:
        depends_on("c", type="build")
        depends_on("cxx", type="build")  # configure probes C++ (shmem.h's C++ tests)
    depends_on("pkgconfig", type="build")
    # A git checkout has no configure: autogen.sh makes it.
    with when("@main"):
        depends_on("autoconf", type="build")
        depends_on("automake", type="build")
        depends_on("libtool", type="build")
        depends_on("m4", type="build")

    depends_on("libfabric@1.14:")
    depends_on("pmix@3:")
    depends_on("hwloc@2:")
    # +cuda and cuda_arch come from CudaPackage. fabshmem needs cuda.h only: the driver is
    # opened at run time, so cuda_arch changes nothing in the build.

    # fabshmem-oshcc and fabshmem-oshc++ keep the compilers configure found: Spack's wrappers
    # during the build, the real compilers once installed, so that they work outside Spack.
    filter_compiler_wrappers("fabshmem-oshcc", "fabshmem-oshc++", relative_root="bin")

    def setup_dependent_build_environment(self, env, dependent_spec):
        # A package built against fabshmem with fabshmem-oshcc (fabshmem-oshc++) compiles
        # through Spack's wrapper.
        env.set("OSHCC_CC", spack_cc)
        env.set("OSHCXX_CXX", spack_cxx)

    def autoreconf(self, spec, prefix):
        if spec.satisfies("@main"):
            Executable("./autogen.sh")()
        elif not os.path.exists("configure"):
            raise InstallError(
                f"{self.stage.source_path} has no configure: a git checkout builds as "
                "fabshmem@main (which runs autogen.sh), a release as the make-dist tarball"
            )

    def configure_args(self):
        spec = self.spec
        args = [
            f"--with-ofi={spec['libfabric'].prefix}",
            f"--with-pmix={spec['pmix'].prefix}",
            f"--with-hwloc={spec['hwloc'].prefix}",
            # Spack brings no launcher: `make check` (spack install --test) runs the tests
            # that need none.
            "--disable-launcher-tests",
            # fabshmem-oshrun looks mpirun up on PATH when it runs, not where this build found
            # one (configure's AC_PATH_PROG would search PATH for a plain MPIRUN=mpirun).
            "ac_cv_path_MPIRUN=mpirun",
        ]
        if spec.satisfies("+cuda"):
            args.append(f"--with-cuda={spec['cuda'].prefix}")
        else:
            args.append("--without-cuda")
        return args
