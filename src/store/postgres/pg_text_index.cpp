#include "store/postgres/pg_text_index.h"

#include <cstdint>
#include <string_view>

#include "store/postgres/pg_query.h"
#include "store/record_rows.h"
#include "store/search_words.h"

namespace cairn::store::postgres {
namespace {

// True when `text` is well-formed UTF-8, as PostgreSQL requires of text: no stray continuation
// byte, overlong form, surrogate or code point past U+10FFFF.
bool IsUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    size_t more = 0;
    uint32_t code = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
      more = 1, code = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      more = 2, code = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      more = 3, code = lead & 0x07;
    } else {
      return false;
    }
    if (text.size() - i <= more) return false;
    for (size_t k = 1; k <= more; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    if ((more == 2 && code < 0x800) || (more == 3 && (code < 0x10000 || code > 0x10FFFF)) ||
        (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += more + 1;
  }
  return true;
}

// The operands of the query: each word as one quoted to_tsquery operand ("'harbour'",
// "'lisb':*"). A word holds no quote, backslash, space or operator (none is a word byte), so
// nothing in it is read as tsquery syntax.
std::vector<std::string> Operands(const std::vector<SearchWord>& words) {
  std::vector<std::string> operands;
  for (const SearchWord& word : words) {
    if (!IsUtf8(word.text)) continue;  // matches nothing: every stored text is UTF-8
    operands.push_back("'" + word.text + "'" + (word.prefix ? ":*" : ""));
  }
  return operands;
}

// ts_rank's weights of the labels D (context), C (unused), B (description, tags), A (title): the
// proportions of SQLite's bm25() weights (title 4, description 2, tags 2, context 1).
constexpr const char* kRankWeights = "'{0.25, 0.5, 0.5, 1.0}'";
// ts_rank's normalization 1: divided by 1 + log(the record's number of words), so a word says
// less in a long text (BM25's length normalization, gentler).
constexpr const char* kRankNormalization = "1";
// A snippet of the record `b` for `tsquery`: ts_headline over the text its search_vector is made
// of (but with its punctuation), about 16 words around the best match.
std::string Snippet(const std::string& tsquery) {
  return "ts_headline('simple', concat_ws(' ', b.title, b.description, cairn_json_strings(b.tags::jsonb), "
         "cairn_json_strings(b.doc)), " + tsquery + ", 'StartSel=**, StopSel=**, MaxWords=16, MinWords=8')";
}

constexpr int kScoreColumn = kBreadcrumbColumnCount;
constexpr int kSnippetColumn = kBreadcrumbColumnCount + 1;

}  // namespace

PgTextIndex::PgTextIndex(std::shared_ptr<PgDatabase> db, const Clock& clock) : db_(std::move(db)), clock_(clock) {}

Result<std::vector<TextHit>> PgTextIndex::SearchText(const std::string& owner_id, const TextSearchQuery& query) {
  CAIRN_RETURN_IF_ERROR(CheckSearchLimit(query.limit));
  CAIRN_ASSIGN_OR_RETURN(std::vector<SearchWord> words, SearchQueryWords(query.text));
  std::vector<std::string> operands = Operands(words);
  if (operands.empty()) return std::vector<TextHit>{};
  std::string any;
  for (const std::string& operand : operands) any += (any.empty() ? "" : " | ") + operand;

  PgParams p;
  const std::string any_query = "to_tsquery('simple', " + p.Add(any) + "::text)";
  // Every step after `matched` reads only the records the words matched (tenant, expiry and
  // filters applied), and the records and snippets are read for the best `limit` alone.
  // - per_word: each matched record's ts_rank for each word it holds;
  // - weights: each word's inverse document frequency among the matched records (BM25's
  //   ln(1 + (N - n + 0.5) / (n + 0.5)): positive, larger for rarer words);
  // - best: the sum over the words, best first, ties to the newer record as in SQLite.
  std::string sql =
      "WITH words AS MATERIALIZED (SELECT n, to_tsquery('simple', w) AS q FROM jsonb_array_elements_text(" +
      p.Add(TagsJson(operands)) + "::jsonb) WITH ORDINALITY AS t(w, n)), "
      "matched AS MATERIALIZED (SELECT b.rid, b.search_vector AS v FROM breadcrumbs b WHERE b.search_vector @@ " +
      any_query + " AND b.owner_id = " + p.Add(owner_id) + " AND (b.expires_at IS NULL OR b.expires_at > " +
      p.Add(clock_.NowMicros()) + "::bigint)" + PgRecordFilterSql(query, p) + "), "
      "per_word AS (SELECT m.rid, w.n, ts_rank(" + kRankWeights + ", m.v, w.q, " + kRankNormalization +
      ")::float8 AS r FROM matched m JOIN words w ON m.v @@ w.q), "
      "weights AS (SELECT n, ln(1 + ((SELECT count(*) FROM matched) - count(*) + 0.5) / (count(*) + 0.5))::float8 "
      "AS idf FROM per_word GROUP BY n), "
      "best AS (SELECT r.rid, sum(r.r * weights.idf) AS score FROM per_word r JOIN weights USING (n) GROUP BY r.rid "
      "ORDER BY score DESC, r.rid DESC LIMIT " + p.Add(static_cast<int64_t>(query.limit)) + "::bigint) "
      "SELECT " + BreadcrumbColumns() + ", best.score, " + (query.snippets ? Snippet(any_query) : "''") +
      " FROM best JOIN breadcrumbs b ON b.rid = best.rid ORDER BY best.score DESC, best.rid DESC";

  std::vector<TextHit> hits;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    // Planned for these words and filters: a statement per query shape is not worth keeping.
    CAIRN_ASSIGN_OR_RETURN(PgResult rows, conn.QueryOnce(sql, p));
    hits.reserve(rows.rows());
    for (int i = 0; i < rows.rows(); ++i) {
      PgRow row = rows.Row(i);
      TextHit hit;
      CAIRN_ASSIGN_OR_RETURN(hit.breadcrumb, ReadBreadcrumb(row, nullptr));
      hit.score = row.Double(kScoreColumn);
      hit.snippet = std::string(row.Text(kSnippetColumn));
      hits.push_back(std::move(hit));
    }
    return Status::Ok();
  }));
  return hits;
}

}  // namespace cairn::store::postgres
