// campaign_tally.h — a campaign test binary's tally: one T for the whole run
// (every test adds to it under T::mu), printed once as its "CAMPAIGN ..."
// line when the tests end, so a ctest log shows what the campaign covered.
#ifndef PGRING_TESTS_UTIL_CAMPAIGN_TALLY_H_
#define PGRING_TESTS_UTIL_CAMPAIGN_TALLY_H_

#include <gtest/gtest.h>

#include <cstdio>
#include <mutex>

namespace pgring::testing {

template <typename T>
T& TallyOf() {
  static T* t = new T;  // never destroyed: tests may add to it until exit
  return *t;
}

// Registers `print` to run on the tally (locked) after the last test.
// Returns true, for use in a namespace-scope initializer.
template <typename T>
bool PrintTallyAtEnd(void (*print)(const T&)) {
  class Printer : public ::testing::Environment {
   public:
    explicit Printer(void (*print)(const T&)) : print_(print) {}
    void TearDown() override {
      T& t = TallyOf<T>();
      std::lock_guard<std::mutex> l(t.mu);
      print_(t);
      std::fflush(stdout);
    }

   private:
    void (*print_)(const T&);
  };
  ::testing::AddGlobalTestEnvironment(new Printer(print));
  return true;
}

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_CAMPAIGN_TALLY_H_
