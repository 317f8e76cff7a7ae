#include "search/embedder.h"

#include <cmath>

namespace cairn::search {

double Cosine(const float* a, const float* b, size_t n) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < n; ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na == 0 || nb == 0) return 0;
  return dot / (std::sqrt(na) * std::sqrt(nb));
}

void Normalize(std::vector<float>& v) {
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x) * x;
  if (sum == 0) return;
  const double scale = 1.0 / std::sqrt(sum);
  for (float& x : v) x = static_cast<float>(x * scale);
}

}  // namespace cairn::search
