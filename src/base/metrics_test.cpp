#include "base/metrics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace cairn {
namespace {

bool HasLine(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  std::string current;
  while (std::getline(in, current)) {
    if (current == line) return true;
  }
  return false;
}

TEST(CounterTest, Increments) {
  Counter counter;
  EXPECT_EQ(counter.value(), 0u);
  counter.Increment();
  counter.Increment(41);
  EXPECT_EQ(counter.value(), 42u);
}

TEST(CounterTest, ConcurrentIncrementsAreNotLost) {
  Counter counter;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) counter.Increment();
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(counter.value(), 40000u);
}

TEST(MetricsRegistryTest, SameNameAndLabelsIsTheSameCounter) {
  MetricsRegistry registry;
  Counter& a = registry.GetCounter("cairn_requests_total", "Requests", "route=\"/a\"");
  Counter& b = registry.GetCounter("cairn_requests_total", "Requests", "route=\"/a\"");
  Counter& c = registry.GetCounter("cairn_requests_total", "Requests", "route=\"/b\"");
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &c);
}

TEST(MetricsRegistryTest, RendersCountersWithHelpTypeAndLabels) {
  MetricsRegistry registry;
  registry.GetCounter("cairn_requests_total", "HTTP requests served", "route=\"/breadcrumbs\",method=\"POST\"")
      .Increment(3);
  registry.GetCounter("cairn_requests_total", "HTTP requests served", "route=\"/health\",method=\"GET\"").Increment();
  registry.GetCounter("cairn_plain_total", "No labels").Increment(5);
  std::string text = registry.RenderPrometheus();
  EXPECT_TRUE(HasLine(text, "# HELP cairn_requests_total HTTP requests served")) << text;
  EXPECT_TRUE(HasLine(text, "# TYPE cairn_requests_total counter")) << text;
  EXPECT_TRUE(HasLine(text, "cairn_requests_total{route=\"/breadcrumbs\",method=\"POST\"} 3")) << text;
  EXPECT_TRUE(HasLine(text, "cairn_requests_total{route=\"/health\",method=\"GET\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "# TYPE cairn_plain_total counter")) << text;
  EXPECT_TRUE(HasLine(text, "cairn_plain_total 5")) << text;
  // HELP and TYPE appear once per family, not once per label set.
  size_t first = text.find("# HELP cairn_requests_total");
  EXPECT_EQ(text.find("# HELP cairn_requests_total", first + 1), std::string::npos);
}

TEST(HistogramTest, BucketsAreCumulativeWithInf) {
  MetricsRegistry registry;
  Histogram& h = registry.GetHistogram("cairn_latency_seconds", "Latency", "route=\"/x\"", {0.1, 1, 10});
  for (double v : {0.05, 0.1, 0.5, 1.0, 5.0, 50.0, 100.0}) h.Observe(v);  // boundaries are inclusive (le)
  EXPECT_EQ(h.count(), 7u);
  std::string text = registry.RenderPrometheus();
  EXPECT_TRUE(HasLine(text, "# HELP cairn_latency_seconds Latency")) << text;
  EXPECT_TRUE(HasLine(text, "# TYPE cairn_latency_seconds histogram")) << text;
  EXPECT_TRUE(HasLine(text, "cairn_latency_seconds_bucket{route=\"/x\",le=\"0.1\"} 2")) << text;
  EXPECT_TRUE(HasLine(text, "cairn_latency_seconds_bucket{route=\"/x\",le=\"1\"} 4")) << text;
  EXPECT_TRUE(HasLine(text, "cairn_latency_seconds_bucket{route=\"/x\",le=\"10\"} 5")) << text;
  EXPECT_TRUE(HasLine(text, "cairn_latency_seconds_bucket{route=\"/x\",le=\"+Inf\"} 7")) << text;
  EXPECT_TRUE(HasLine(text, "cairn_latency_seconds_count{route=\"/x\"} 7")) << text;
  EXPECT_TRUE(HasLine(text, "cairn_latency_seconds_sum{route=\"/x\"} 156.65")) << text;
}

TEST(HistogramTest, WithoutLabels) {
  Histogram h({1, 2});
  h.Observe(1.5);
  std::string out;
  h.Render("h", "", out);
  EXPECT_TRUE(HasLine(out, "h_bucket{le=\"1\"} 0")) << out;
  EXPECT_TRUE(HasLine(out, "h_bucket{le=\"2\"} 1")) << out;
  EXPECT_TRUE(HasLine(out, "h_bucket{le=\"+Inf\"} 1")) << out;
  EXPECT_TRUE(HasLine(out, "h_sum 1.5")) << out;
  EXPECT_TRUE(HasLine(out, "h_count 1")) << out;
}

TEST(HistogramTest, EmptyHistogramRendersZeros) {
  Histogram h({0.5});
  std::string out;
  h.Render("e", "a=\"b\"", out);
  EXPECT_TRUE(HasLine(out, "e_bucket{a=\"b\",le=\"0.5\"} 0")) << out;
  EXPECT_TRUE(HasLine(out, "e_bucket{a=\"b\",le=\"+Inf\"} 0")) << out;
  EXPECT_TRUE(HasLine(out, "e_count{a=\"b\"} 0")) << out;
}

TEST(HistogramTest, LatencyBucketsAreIncreasing) {
  auto bounds = MetricsRegistry::LatencyBuckets();
  ASSERT_FALSE(bounds.empty());
  for (size_t i = 1; i < bounds.size(); ++i) EXPECT_LT(bounds[i - 1], bounds[i]);
  EXPECT_DOUBLE_EQ(bounds.front(), 0.00005);
  EXPECT_DOUBLE_EQ(bounds.back(), 10);
}

TEST(MetricsRegistryTest, GaugeIsReadAtRenderTime) {
  MetricsRegistry registry;
  std::atomic<int> records{3};
  registry.AddGauge("cairn_records", "Stored breadcrumbs", [&] { return static_cast<double>(records.load()); });
  std::string first = registry.RenderPrometheus();
  EXPECT_TRUE(HasLine(first, "# HELP cairn_records Stored breadcrumbs")) << first;
  EXPECT_TRUE(HasLine(first, "# TYPE cairn_records gauge")) << first;
  EXPECT_TRUE(HasLine(first, "cairn_records 3")) << first;
  records = 10;
  EXPECT_TRUE(HasLine(registry.RenderPrometheus(), "cairn_records 10"));
}

TEST(MetricsRegistryTest, EveryFamilyIsRendered) {
  MetricsRegistry registry;
  registry.GetCounter("a_total", "A").Increment();
  registry.GetHistogram("b_seconds", "B").Observe(0.001);
  registry.AddGauge("c", "C", [] { return 1.5; });
  std::string text = registry.RenderPrometheus();
  EXPECT_TRUE(HasLine(text, "# TYPE a_total counter"));
  EXPECT_TRUE(HasLine(text, "# TYPE b_seconds histogram"));
  EXPECT_TRUE(HasLine(text, "# TYPE c gauge"));
  EXPECT_TRUE(HasLine(text, "c 1.5"));
  EXPECT_TRUE(HasLine(text, "b_seconds_bucket{le=\"0.001\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "b_seconds_bucket{le=\"0.0005\"} 0")) << text;
  EXPECT_TRUE(HasLine(text, "b_seconds_count 1")) << text;
}

TEST(LabeledCountersTest, OneCounterPerValueBesideTheFixedLabels) {
  MetricsRegistry registry;
  LabeledCounters runs(registry, "cairn_runs_total", "Runs", "tenant", "status=\"failed\"");
  runs.For("acme").Increment(2);
  runs.For("acme").Increment();
  runs.For("globex").Increment();
  runs.For("we\"ird\\").Increment();
  EXPECT_EQ(&runs.For("acme"), &registry.GetCounter("cairn_runs_total", "Runs", "status=\"failed\",tenant=\"acme\""));
  std::string text = registry.RenderPrometheus();
  EXPECT_TRUE(HasLine(text, "cairn_runs_total{status=\"failed\",tenant=\"acme\"} 3")) << text;
  EXPECT_TRUE(HasLine(text, "cairn_runs_total{status=\"failed\",tenant=\"globex\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "cairn_runs_total{status=\"failed\",tenant=\"we\\\"ird\\\\\"} 1")) << text;
}

TEST(LabeledCountersTest, ConcurrentFirstUsesShareOneCounter) {
  MetricsRegistry registry;
  LabeledCounters events(registry, "cairn_events_total", "Events", "tenant");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) events.For(i % 2 ? "acme" : "globex").Increment();
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(events.For("acme").value(), 2000u);
  EXPECT_EQ(events.For("globex").value(), 2000u);
}

TEST(MetricsRegistryTest, ATenantsRenderingLeavesOutOtherTenantsSeries) {
  MetricsRegistry registry;
  registry.GetCounter("cairn_plain_total", "No labels").Increment();
  registry.GetCounter("cairn_requests_total", "Requests", "route=\"/a\"").Increment();
  LabeledCounters runs(registry, "cairn_runs_total", "Runs", "tenant", "status=\"completed\"");
  runs.For("acme").Increment();
  runs.For("acme-two").Increment();
  runs.For("globex").Increment();
  registry.GetHistogram("cairn_run_seconds", "Run time", "tenant=\"globex\"").Observe(0.5);
  std::string acme = registry.RenderPrometheus("acme");
  EXPECT_TRUE(HasLine(acme, "cairn_plain_total 1")) << acme;
  EXPECT_TRUE(HasLine(acme, "cairn_requests_total{route=\"/a\"} 1")) << acme;
  EXPECT_TRUE(HasLine(acme, "cairn_runs_total{status=\"completed\",tenant=\"acme\"} 1")) << acme;
  EXPECT_EQ(acme.find("globex"), std::string::npos) << acme;
  EXPECT_EQ(acme.find("acme-two"), std::string::npos) << acme;  // a prefix is not the tenant
  std::string all = registry.RenderPrometheus();
  EXPECT_TRUE(HasLine(all, "cairn_runs_total{status=\"completed\",tenant=\"globex\"} 1")) << all;
  EXPECT_TRUE(HasLine(all, "cairn_run_seconds_count{tenant=\"globex\"} 1")) << all;
}

}  // namespace
}  // namespace cairn
