// The server's version, reported in every answer's Provenance and in build_info.
#ifndef EXACTQ_SERVER_VERSION_H_
#define EXACTQ_SERVER_VERSION_H_

namespace exactq::server {
// The release number alone (exactq_build_info{version}, --version).
inline constexpr char kVersionNumber[] = "0.1.0";
// What answers carry in their Provenance.
inline constexpr char kServerVersion[] = "exactq 0.1.0";
// The source revision, when the build was given one
// (--copt=-DEXACTQ_REVISION=\"$(git rev-parse --short=12 HEAD)\"; the container recipe does).
#ifdef EXACTQ_REVISION
inline constexpr char kRevision[] = EXACTQ_REVISION;
#else
inline constexpr char kRevision[] = "unknown";
#endif
// exactq_build_info{cuda}: whether this binary has the CUDA backend.
#if defined(EXACTQ_CUDA_COMPILED) && EXACTQ_CUDA_COMPILED
inline constexpr char kCudaCompiled[] = "true";
#else
inline constexpr char kCudaCompiled[] = "false";
#endif
}  // namespace exactq::server

#endif  // EXACTQ_SERVER_VERSION_H_
