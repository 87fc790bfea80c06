// campaign_util.h — small helpers shared by the reliability campaigns
// (tests/campaigns/): environment knobs and the one-line summary each
// campaign prints ("CAMPAIGN <name>: k=v ..."), which
// tests/campaigns/run_campaigns.sh collects.
#ifndef PGRING_TESTS_CAMPAIGNS_CAMPAIGN_UTIL_H_
#define PGRING_TESTS_CAMPAIGNS_CAMPAIGN_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace pgring::testing {

// The value of environment variable `name` if set to a positive integer,
// else `def`.
inline uint64_t EnvKnob(const char* name, uint64_t def) {
  const char* e = std::getenv(name);
  if (e == nullptr || *e == '\0') return def;
  long long v = std::atoll(e);
  return v > 0 ? static_cast<uint64_t>(v) : def;
}

// Named counters, summed over every test of the binary and printed as one
// line "CAMPAIGN <name>: key=value ..." when the binary's tests end (a
// global test environment). Keys print in the order they were first added.
class CampaignSummary : public ::testing::Environment {
 public:
  explicit CampaignSummary(std::string name) : name_(std::move(name)) {}

  void Add(const std::string& key, uint64_t n = 1) {
    std::lock_guard<std::mutex> l(mu_);
    auto [it, inserted] = values_.try_emplace(key, 0);
    if (inserted) order_.push_back(key);
    it->second += n;
  }
  // Makes `key` print even if it stays 0 (e.g. "lost").
  void Declare(const std::string& key) { Add(key, 0); }
  uint64_t Get(const std::string& key) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = values_.find(key);
    return it == values_.end() ? 0 : it->second;
  }

  void TearDown() override {
    std::lock_guard<std::mutex> l(mu_);
    if (order_.empty()) return;
    std::string line = "CAMPAIGN " + name_ + ":";
    for (const std::string& k : order_) line += " " + k + "=" + std::to_string(values_[k]);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

 private:
  std::string name_;
  std::mutex mu_;
  std::map<std::string, uint64_t> values_;
  std::vector<std::string> order_;
};

// Registers the summary of this binary (call once, from a static
// initializer of the test file). gtest owns the environment.
inline CampaignSummary* RegisterCampaignSummary(const std::string& name) {
  auto* s = new CampaignSummary(name);
  ::testing::AddGlobalTestEnvironment(s);
  return s;
}

}  // namespace pgring::testing

#endif  // PGRING_TESTS_CAMPAIGNS_CAMPAIGN_UTIL_H_
