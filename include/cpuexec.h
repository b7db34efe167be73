/** @file
 * libcpuexec: one truthful CPU execution policy for every parallel region.
 *
 * The umbrella header: include this, link with `pkg-config --libs cpuexec`.
 * Each topic header stands alone as well. */
#ifndef CPUEXEC_H
#define CPUEXEC_H

#include <cpuexec/common.h>
#include <cpuexec/errors.h>
#include <cpuexec/policy.h>
#include <cpuexec/topology.h>
#include <cpuexec/resolve.h>
#include <cpuexec/executor.h>
#include <cpuexec/foreign.h>
#include <cpuexec/tasks.h>
#include <cpuexec/hooks.h>
#include <cpuexec/counters.h>
#include <cpuexec/registry.h>
#include <cpuexec/session.h>
#include <cpuexec/interop.h>
#include <cpuexec/runtimes.h>
#include <cpuexec/node.h>

#endif
