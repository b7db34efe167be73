/** @file cxx/counters.hpp
 * An executor's optional counters from C++ (cpuexec/counters.h): the same
 * snapshot, with the same fields, as the C struct. Part of cpuexec.hpp. */
#ifndef CPUEXEC_CXX_COUNTERS_HPP
#define CPUEXEC_CXX_COUNTERS_HPP

#include <cpuexec/counters.h>

#include <cpuexec/cxx/error.hpp>
#include <cpuexec/cxx/session.hpp>

namespace cpuexec {

/** A snapshot of an executor's counters: cpuexec_counters itself, so every
 * field and its meaning are the C header's ("did this go parallel?" is
 * parallel_regions). */
using counters = cpuexec_counters;

/** Turns counting on for every lease of exec (cpuexec_executor_counters_enable());
 * throws cpuexec::error for the serial executor, which has no counters. */
inline void enable_counters(executor_ref exec) { detail::check(cpuexec_executor_counters_enable(exec.get())); }

/** A snapshot of exec's counters (cpuexec_executor_counters_get()); all zero
 * while counting is off; throws cpuexec::error for the serial executor. */
inline counters counters_of(executor_ref exec) {
  counters c;
  detail::check(cpuexec_executor_counters_get(exec.get(), &c));
  return c;
}

} // namespace cpuexec

#endif
