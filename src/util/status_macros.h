// status_macros.h — the two macros the Debian Abseil (20220623) lacks.
#ifndef PGRING_UTIL_STATUS_MACROS_H_
#define PGRING_UTIL_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define PGRING_CONCAT_INNER_(a, b) a##b
#define PGRING_CONCAT_(a, b) PGRING_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function if `expr` is not OK.
#define RETURN_IF_ERROR(expr)                  \
  do {                                         \
    ::absl::Status _pgring_st = (expr);        \
    if (!_pgring_st.ok()) return _pgring_st;   \
  } while (0)

// ASSIGN_OR_RETURN(auto x, MakeX()); returns the error if MakeX() failed.
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  ASSIGN_OR_RETURN_IMPL_(PGRING_CONCAT_(_pgring_sor_, __LINE__), lhs, rexpr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                           \
  if (!tmp.ok()) return tmp.status();           \
  lhs = std::move(tmp).value()

#endif  // PGRING_UTIL_STATUS_MACROS_H_
