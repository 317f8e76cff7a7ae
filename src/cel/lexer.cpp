#include "cel/lexer.h"

#include <cerrno>
#include <cstdlib>
#include <limits>

namespace cairn::cel {
namespace {

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }
int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(char(cp));
  } else if (cp < 0x800) {
    out->push_back(char(0xC0 | (cp >> 6)));
    out->push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(char(0xE0 | (cp >> 12)));
    out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(char(0xF0 | (cp >> 18)));
    out->push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(char(0x80 | (cp & 0x3F)));
  }
}

bool IsReserved(std::string_view word) {
  static constexpr std::string_view kReserved[] = {
      "as", "break", "const", "continue", "else", "for", "function", "if", "import",
      "let", "loop", "package", "namespace", "return", "var", "void", "while"};
  for (auto r : kReserved) {
    if (r == word) return true;
  }
  return false;
}

class Lexer {
 public:
  Lexer(std::string_view source, std::vector<Token>* tokens, SourceError* error)
      : src_(source), tokens_(tokens), error_(error) {}

  bool Run() {
    while (true) {
      SkipSpaceAndComments();
      Token token;
      token.offset = uint32_t(pos_);
      if (pos_ >= src_.size()) {
        tokens_->push_back(token);
        return true;
      }
      if (!Next(&token)) return false;
      tokens_->push_back(std::move(token));
    }
  }

 private:
  bool Fail(size_t at, std::string message) {
    error_->message = std::move(message);
    error_->offset = uint32_t(at);
    return false;
  }
  char Peek(size_t ahead = 0) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }

  void SkipSpaceAndComments() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++pos_;
      } else if (c == '/' && Peek(1) == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  bool Next(Token* token) {
    char c = src_[pos_];
    if (IsDigit(c) || (c == '.' && IsDigit(Peek(1)))) return Number(token);
    if (c == '"' || c == '\'') return Quoted(token, false, false);
    if (IsIdentStart(c)) {
      // String prefixes: r, b and both in either order and case, directly before a quote.
      size_t n = 0;
      bool raw = false, bytes = false;
      while (n < 2 && pos_ + n < src_.size()) {
        char p = src_[pos_ + n];
        if ((p == 'r' || p == 'R') && !raw) {
          raw = true;
        } else if ((p == 'b' || p == 'B') && !bytes) {
          bytes = true;
        } else {
          break;
        }
        ++n;
        char q = Peek(n);
        if (q == '"' || q == '\'') {
          pos_ += n;
          return Quoted(token, raw, bytes);
        }
      }
      size_t start = pos_;
      while (pos_ < src_.size() && IsIdentChar(src_[pos_])) ++pos_;
      std::string_view word = src_.substr(start, pos_ - start);
      if (word == "true") {
        token->type = TokenType::kTrue;
      } else if (word == "false") {
        token->type = TokenType::kFalse;
      } else if (word == "null") {
        token->type = TokenType::kNull;
      } else if (word == "in") {
        token->type = TokenType::kIn;
      } else {
        token->type = TokenType::kIdent;
        token->text = word;
        token->reserved = IsReserved(word);
      }
      return true;
    }
    if (c == '`') {
      // A quoted field name: `content-type`, for map keys that are not identifiers.
      size_t start = ++pos_;
      while (pos_ < src_.size() && src_[pos_] != '`' && src_[pos_] != '\n') ++pos_;
      if (pos_ >= src_.size() || src_[pos_] != '`' || pos_ == start) return Fail(start - 1, "malformed quoted field name");
      token->type = TokenType::kQuotedIdent;
      token->text = src_.substr(start, pos_ - start);
      ++pos_;
      return true;
    }
    return Operator(token);
  }

  bool Operator(Token* token) {
    char c = src_[pos_];
    char d = Peek(1);
    auto two = [&](TokenType t) { token->type = t; pos_ += 2; return true; };
    auto one = [&](TokenType t) { token->type = t; pos_ += 1; return true; };
    switch (c) {
      case '(': return one(TokenType::kLParen);
      case ')': return one(TokenType::kRParen);
      case '[': return one(TokenType::kLBracket);
      case ']': return one(TokenType::kRBracket);
      case '{': return one(TokenType::kLBrace);
      case '}': return one(TokenType::kRBrace);
      case '.': return one(TokenType::kDot);
      case ',': return one(TokenType::kComma);
      case ':': return one(TokenType::kColon);
      case '?': return one(TokenType::kQuestion);
      case '+': return one(TokenType::kPlus);
      case '-': return one(TokenType::kMinus);
      case '*': return one(TokenType::kStar);
      case '/': return one(TokenType::kSlash);
      case '%': return one(TokenType::kPercent);
      case '!': return d == '=' ? two(TokenType::kNe) : one(TokenType::kNot);
      case '=': if (d == '=') return two(TokenType::kEq); break;
      case '<': return d == '=' ? two(TokenType::kLe) : one(TokenType::kLt);
      case '>': return d == '=' ? two(TokenType::kGe) : one(TokenType::kGt);
      case '&': if (d == '&') return two(TokenType::kAnd); break;
      case '|': if (d == '|') return two(TokenType::kOr); break;
      default: break;
    }
    return Fail(pos_, std::string("unexpected character '") + c + "'");
  }

  bool Number(Token* token) {
    size_t start = pos_;
    if (Peek() == '0' && (Peek(1) == 'x' || Peek(1) == 'X')) {
      pos_ += 2;
      size_t digits = pos_;
      uint64_t v = 0;
      while (HexDigit(Peek()) >= 0) {
        if (v > (std::numeric_limits<uint64_t>::max() >> 4)) return Fail(start, "hex literal out of range");
        v = (v << 4) | uint64_t(HexDigit(Peek()));
        ++pos_;
      }
      if (pos_ == digits) return Fail(start, "malformed hex literal");
      return IntegerSuffix(token, start, v);
    }
    while (IsDigit(Peek())) ++pos_;
    bool is_double = false;
    if (Peek() == '.' && IsDigit(Peek(1))) {
      is_double = true;
      ++pos_;
      while (IsDigit(Peek())) ++pos_;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      size_t save = pos_;
      ++pos_;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (!IsDigit(Peek())) {
        pos_ = save;
      } else {
        is_double = true;
        while (IsDigit(Peek())) ++pos_;
      }
    }
    std::string text(src_.substr(start, pos_ - start));
    if (is_double) {
      errno = 0;
      double d = std::strtod(text.c_str(), nullptr);
      if (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL)) return Fail(start, "double literal out of range");
      token->type = TokenType::kDouble;
      token->literal = Value::Double(d);
      return NoTrailingIdent(start);
    }
    uint64_t v = 0;
    for (char c : text) {
      uint64_t digit = uint64_t(c - '0');
      if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) return Fail(start, "integer literal out of range");
      v = v * 10 + digit;
    }
    return IntegerSuffix(token, start, v);
  }

  bool IntegerSuffix(Token* token, size_t start, uint64_t v) {
    if (Peek() == 'u' || Peek() == 'U') {
      ++pos_;
      token->type = TokenType::kUint;
      token->literal = Value::Uint(v);
    } else {
      token->type = TokenType::kInt;
      token->int_magnitude = v;
    }
    return NoTrailingIdent(start);
  }

  bool NoTrailingIdent(size_t start) {
    if (IsIdentChar(Peek())) return Fail(start, "malformed number literal");
    return true;
  }

  bool Quoted(Token* token, bool raw, bool bytes) {
    size_t start = pos_;
    char quote = src_[pos_];
    bool triple = Peek(1) == quote && Peek(2) == quote;
    pos_ += triple ? 3 : 1;
    std::string out;
    while (true) {
      if (pos_ >= src_.size()) return Fail(start, "unterminated string literal");
      char c = src_[pos_];
      if (c == quote && (!triple || (Peek(1) == quote && Peek(2) == quote))) {
        pos_ += triple ? 3 : 1;
        break;
      }
      if (!triple && (c == '\n' || c == '\r')) return Fail(pos_, "newline in string literal");
      if (c == '\\' && !raw) {
        if (!Escape(&out, bytes)) return false;
        continue;
      }
      out.push_back(c);
      ++pos_;
    }
    token->type = bytes ? TokenType::kBytes : TokenType::kString;
    token->literal = bytes ? Value::Bytes(std::move(out)) : Value::String(std::move(out));
    return true;
  }

  bool Escape(std::string* out, bool bytes) {
    size_t at = pos_;
    ++pos_;  // the backslash
    if (pos_ >= src_.size()) return Fail(at, "unterminated escape sequence");
    char c = src_[pos_++];
    switch (c) {
      case 'a': out->push_back('\a'); return true;
      case 'b': out->push_back('\b'); return true;
      case 'f': out->push_back('\f'); return true;
      case 'n': out->push_back('\n'); return true;
      case 'r': out->push_back('\r'); return true;
      case 't': out->push_back('\t'); return true;
      case 'v': out->push_back('\v'); return true;
      case '\\': case '?': case '"': case '\'': case '`': out->push_back(c); return true;
      case 'x': case 'X': return HexEscape(out, bytes, 2, at);
      case 'u': if (bytes) break; return HexEscape(out, bytes, 4, at);
      case 'U': if (bytes) break; return HexEscape(out, bytes, 8, at);
      default: break;
    }
    if (c >= '0' && c <= '3') {
      uint32_t v = uint32_t(c - '0');
      for (int i = 0; i < 2; ++i) {
        char o = Peek();
        if (o < '0' || o > '7') return Fail(at, "malformed octal escape");
        v = v * 8 + uint32_t(o - '0');
        ++pos_;
      }
      return Put(out, bytes, v);
    }
    return Fail(at, std::string("invalid escape sequence '\\") + c + "'");
  }

  bool HexEscape(std::string* out, bool bytes, int digits, size_t at) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      int h = HexDigit(Peek());
      if (h < 0) return Fail(at, "malformed hex escape");
      v = (v << 4) | uint32_t(h);
      ++pos_;
    }
    if (digits > 2 && ((v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF)) {
      return Fail(at, "invalid code point in escape");
    }
    return Put(out, bytes, v);
  }

  bool Put(std::string* out, bool bytes, uint32_t v) {
    if (bytes) {
      out->push_back(char(v));
    } else {
      AppendUtf8(out, v);
    }
    return true;
  }

  std::string_view src_;
  std::vector<Token>* tokens_;
  SourceError* error_;
  size_t pos_ = 0;
};

}  // namespace

bool Tokenize(std::string_view source, std::vector<Token>* tokens, SourceError* error) {
  return Lexer(source, tokens, error).Run();
}

std::string DescribePosition(std::string_view source, uint32_t offset) {
  int line = 1, column = 1;
  for (size_t i = 0; i < offset && i < source.size(); ++i) {
    if (source[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(source[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

}  // namespace cairn::cel
