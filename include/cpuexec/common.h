/** @file
 * libcpuexec: common definitions shared by every topic header.
 *
 * One export macro, the compile-time API version, and the run-time version
 * query. This header stands alone; every other public header includes it.
 * The conventions every header follows (names, argument order, integer
 * types, {0} and _init, growth room, thread-safety and NULL rules) are in
 * doc/api-conventions.md. Both functions here are thread-safe and never
 * fail. */
#ifndef CPUEXEC_COMMON_H
#define CPUEXEC_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Marks the functions the library exports (it is built with hidden
 * visibility; on Windows, the DLL exports these and nothing else); empty
 * for users of the headers (the DLL's import library resolves the calls). */
#if defined(CPUEXEC_BUILDING) && defined(_WIN32)
#define CPUEXEC_EXPORT __declspec(dllexport)
#elif defined(CPUEXEC_BUILDING) && defined(__GNUC__)
#define CPUEXEC_EXPORT __attribute__((visibility("default")))
#else
#define CPUEXEC_EXPORT
#endif

#ifdef __cplusplus
#define CPUEXEC_BEGIN_DECLS extern "C" {
#define CPUEXEC_END_DECLS }
#else
#define CPUEXEC_BEGIN_DECLS
#define CPUEXEC_END_DECLS
#endif

/** The API version this header describes: major. It must equal the release
 * in the VERSION file; configure refuses to run when they differ, and a test
 * checks that cpuexec_version() agrees with these macros. */
#define CPUEXEC_VERSION_MAJOR 1
/** The API version this header describes: minor. */
#define CPUEXEC_VERSION_MINOR 0
/** The API version this header describes: patch. */
#define CPUEXEC_VERSION_PATCH 0
/** The API version as one number, 0xMMmmpp, comparable with cpuexec_version(). */
#define CPUEXEC_VERSION_HEX \
  ((CPUEXEC_VERSION_MAJOR << 16) | (CPUEXEC_VERSION_MINOR << 8) | CPUEXEC_VERSION_PATCH)

CPUEXEC_BEGIN_DECLS

/** The version of the library loaded at run time, as CPUEXEC_VERSION_HEX.
 * Compare it with CPUEXEC_VERSION_HEX to detect a header/library mismatch.
 * Thread-safe; never fails. */
CPUEXEC_EXPORT unsigned cpuexec_version(void);
/** The same as "MAJOR.MINOR.PATCH", in static storage (never free it).
 * Thread-safe; never fails. */
CPUEXEC_EXPORT const char *cpuexec_version_string(void);

CPUEXEC_END_DECLS

#endif
