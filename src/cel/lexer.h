// The CEL lexer: source text to tokens, literals decoded (escapes, raw and triple-quoted strings,
// bytes, int/uint/double with range checks). Positions are byte offsets into the source.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cel/value.h"

namespace cairn::cel {

enum class TokenType : uint8_t {
  kEnd, kIdent, kQuotedIdent, kInt, kUint, kDouble, kString, kBytes, kTrue, kFalse, kNull, kIn,
  kLParen, kRParen, kLBracket, kRBracket, kLBrace, kRBrace, kDot, kComma, kColon, kQuestion,
  kPlus, kMinus, kStar, kSlash, kPercent, kNot, kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr,
};

struct Token {
  TokenType type = TokenType::kEnd;
  uint32_t offset = 0;
  std::string_view text;   // the identifier's name (kIdent; kQuotedIdent without its backticks)
  bool reserved = false;   // kIdent: a reserved word, usable only as a field or method name
  uint64_t int_magnitude = 0;  // kInt: the unsigned magnitude (the sign is the parser's)
  Value literal;               // kUint, kDouble, kString, kBytes: the decoded value
};

// A compile error: a message and the byte offset it concerns.
struct SourceError {
  std::string message;
  uint32_t offset = 0;
};

// Tokenises `source`; on failure returns false and fills `error`.
bool Tokenize(std::string_view source, std::vector<Token>* tokens, SourceError* error);

// "line L, column C" (1-based; columns count code points) of a byte offset.
std::string DescribePosition(std::string_view source, uint32_t offset);

}  // namespace cairn::cel
