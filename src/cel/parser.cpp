#include "cel/parser.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>

namespace cairn::cel {
namespace {

class Parser {
 public:
  Parser(std::vector<Token> tokens, const Limits& limits, SourceError* error)
      : tokens_(std::move(tokens)), limits_(limits), error_(error) {}

  NodePtr ParseAll() {
    NodePtr root = Expr();
    if (!root) return nullptr;
    if (Peek().type != TokenType::kEnd) return Fail(Peek().offset, "unexpected token after the expression");
    return root;
  }

 private:
  // Counts one level of syntactic nesting for the lifetime of a parse function.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser* p) : p_(p) { ++p_->depth_; }
    ~DepthGuard() { --p_->depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser* p_;
  };

  const Token& Peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& Take() { return tokens_[std::min(pos_++, tokens_.size() - 1)]; }
  bool Accept(TokenType t) {
    if (Peek().type != t) return false;
    ++pos_;
    return true;
  }
  NodePtr Fail(uint32_t offset, std::string message) {
    if (!failed_) {
      failed_ = true;
      error_->message = std::move(message);
      error_->offset = offset;
    }
    return nullptr;
  }
  bool Expect(TokenType t, const char* what) {
    if (Accept(t)) return true;
    Fail(Peek().offset, std::string("expected ") + what);
    return false;
  }
  bool TooDeep() {
    if (depth_ <= limits_.max_depth) return false;
    Fail(Peek().offset, "expression nested deeper than " + std::to_string(limits_.max_depth) + " levels");
    return true;
  }

  // Every new node passes here: the height of the finished tree is bounded as well, since long
  // operator chains (a + b + c ...) nest without nesting the parser.
  NodePtr Make(NodeKind kind, uint32_t offset, std::vector<NodePtr> children = {}) {
    int height = 1;
    for (const auto& c : children) height = std::max(height, heights_[c.get()] + 1);
    auto node = std::make_unique<Node>();
    node->kind = kind;
    node->offset = offset;
    node->children = std::move(children);
    if (height > limits_.max_depth) {
      return Fail(offset, "expression nested deeper than " + std::to_string(limits_.max_depth) + " levels");
    }
    heights_[node.get()] = height;
    return node;
  }
  NodePtr Call(std::string name, uint32_t offset, std::vector<NodePtr> args) {
    auto node = Make(NodeKind::kCall, offset, std::move(args));
    if (node) node->name = std::move(name);
    return node;
  }

  NodePtr Expr() {
    DepthGuard guard(this);
    if (TooDeep()) return nullptr;
    NodePtr cond = LogicalChain(TokenType::kOr);
    if (!cond) return nullptr;
    if (Peek().type != TokenType::kQuestion) return cond;
    uint32_t at = Take().offset;
    NodePtr yes = LogicalChain(TokenType::kOr);
    if (!yes || !Expect(TokenType::kColon, "':' in a conditional")) return nullptr;
    NodePtr no = Expr();
    if (!no) return nullptr;
    std::vector<NodePtr> children;
    children.push_back(std::move(cond));
    children.push_back(std::move(yes));
    children.push_back(std::move(no));
    return Make(NodeKind::kConditional, at, std::move(children));
  }

  // a || b || c (and a && b && c) become a balanced tree, so a long chain stays shallow.
  NodePtr LogicalChain(TokenType op) {
    std::vector<NodePtr> operands;
    std::vector<uint32_t> offsets;
    while (true) {
      NodePtr operand = op == TokenType::kOr ? LogicalChain(TokenType::kAnd) : Relation();
      if (!operand) return nullptr;
      operands.push_back(std::move(operand));
      if (Peek().type != op) break;
      offsets.push_back(Take().offset);
    }
    return Balance(op == TokenType::kOr ? NodeKind::kOr : NodeKind::kAnd, operands, offsets, 0, operands.size());
  }
  NodePtr Balance(NodeKind kind, std::vector<NodePtr>& operands, const std::vector<uint32_t>& offsets, size_t lo,
                  size_t hi) {
    if (hi - lo == 1) return std::move(operands[lo]);
    size_t mid = (lo + hi) / 2;
    NodePtr left = Balance(kind, operands, offsets, lo, mid);
    if (!left) return nullptr;
    NodePtr right = Balance(kind, operands, offsets, mid, hi);
    if (!right) return nullptr;
    std::vector<NodePtr> children;
    children.push_back(std::move(left));
    children.push_back(std::move(right));
    return Make(kind, offsets[mid - 1], std::move(children));
  }

  static const char* RelationName(TokenType t) {
    switch (t) {
      case TokenType::kEq: return "_==_";
      case TokenType::kNe: return "_!=_";
      case TokenType::kLt: return "_<_";
      case TokenType::kLe: return "_<=_";
      case TokenType::kGt: return "_>_";
      case TokenType::kGe: return "_>=_";
      case TokenType::kIn: return "@in";
      default: return nullptr;
    }
  }

  NodePtr Binary(const char* name, uint32_t at, NodePtr left, NodePtr right) {
    std::vector<NodePtr> args;
    args.push_back(std::move(left));
    args.push_back(std::move(right));
    return Call(name, at, std::move(args));
  }

  NodePtr Relation() {
    NodePtr left = Addition();
    while (left) {
      const char* name = RelationName(Peek().type);
      if (!name) break;
      uint32_t at = Take().offset;
      NodePtr right = Addition();
      if (!right) return nullptr;
      left = Binary(name, at, std::move(left), std::move(right));
    }
    return left;
  }

  NodePtr Addition() {
    NodePtr left = Multiplication();
    while (left && (Peek().type == TokenType::kPlus || Peek().type == TokenType::kMinus)) {
      const char* name = Peek().type == TokenType::kPlus ? "_+_" : "_-_";
      uint32_t at = Take().offset;
      NodePtr right = Multiplication();
      if (!right) return nullptr;
      left = Binary(name, at, std::move(left), std::move(right));
    }
    return left;
  }

  NodePtr Multiplication() {
    NodePtr left = Unary();
    while (left) {
      TokenType t = Peek().type;
      const char* name = t == TokenType::kStar ? "_*_" : t == TokenType::kSlash ? "_/_" : t == TokenType::kPercent ? "_%_" : nullptr;
      if (!name) break;
      uint32_t at = Take().offset;
      NodePtr right = Unary();
      if (!right) return nullptr;
      left = Binary(name, at, std::move(left), std::move(right));
    }
    return left;
  }

  NodePtr Unary() {
    DepthGuard guard(this);
    if (TooDeep()) return nullptr;
    TokenType t = Peek().type;
    if (t != TokenType::kNot && t != TokenType::kMinus) return Member();
    std::vector<uint32_t> ops;
    while (Peek().type == t) ops.push_back(Take().offset);
    NodePtr operand;
    if (t == TokenType::kMinus && (Peek().type == TokenType::kInt || Peek().type == TokenType::kDouble)) {
      // A minus directly before a number is part of the literal (so the smallest int is writable).
      const Token& number = Take();
      uint32_t at = ops.back();
      ops.pop_back();
      operand = Make(NodeKind::kConstant, at);
      if (!operand) return nullptr;
      if (number.type == TokenType::kDouble) {
        operand->constant = Value::Double(-number.literal.double_value());
      } else {
        if (number.int_magnitude > uint64_t(std::numeric_limits<int64_t>::max()) + 1) {
          return Fail(at, "int literal out of range");
        }
        operand->constant = Value::Int(int64_t(uint64_t(0) - number.int_magnitude));
      }
      operand = MemberSuffix(std::move(operand));
    } else {
      operand = Member();
    }
    while (operand && !ops.empty()) {
      std::vector<NodePtr> args;
      args.push_back(std::move(operand));
      operand = Call(t == TokenType::kNot ? "!_" : "-_", ops.back(), std::move(args));
      ops.pop_back();
    }
    return operand;
  }

  NodePtr Member() {
    NodePtr primary = Primary();
    if (!primary) return nullptr;
    return MemberSuffix(std::move(primary));
  }

  NodePtr MemberSuffix(NodePtr node) {
    while (node) {
      if (Peek().type == TokenType::kDot) {
        uint32_t at = Take().offset;
        if (Peek().type == TokenType::kQuestion) return Fail(at, "optional field selection '.?' is not supported");
        bool quoted = Peek().type == TokenType::kQuotedIdent;
        if (Peek().type != TokenType::kIdent && !quoted) return Fail(Peek().offset, "expected a field name after '.'");
        std::string field(Take().text);
        if (Peek().type == TokenType::kLParen && !quoted) {
          node = ReceiverCall(std::move(node), std::move(field), at);
        } else {
          std::vector<NodePtr> children;
          children.push_back(std::move(node));
          node = Make(NodeKind::kSelect, at, std::move(children));
          if (node) node->name = std::move(field);
        }
      } else if (Peek().type == TokenType::kLBracket) {
        uint32_t at = Take().offset;
        if (Peek().type == TokenType::kQuestion) return Fail(at, "optional index '[?' is not supported");
        NodePtr index = Expr();
        if (!index || !Expect(TokenType::kRBracket, "']'")) return nullptr;
        std::vector<NodePtr> children;
        children.push_back(std::move(node));
        children.push_back(std::move(index));
        node = Make(NodeKind::kIndex, at, std::move(children));
      } else if (Peek().type == TokenType::kLBrace && IsQualifiedName(*node)) {
        return Fail(Peek().offset, "message construction is not supported");
      } else {
        break;
      }
    }
    return node;
  }

  static bool IsQualifiedName(const Node& n) {
    if (n.kind == NodeKind::kIdent) return true;
    return n.kind == NodeKind::kSelect && IsQualifiedName(*n.children[0]);
  }

  bool Arguments(std::vector<NodePtr>* args) {
    if (!Expect(TokenType::kLParen, "'('")) return false;
    if (Accept(TokenType::kRParen)) return true;
    while (true) {
      NodePtr arg = Expr();
      if (!arg) return false;
      args->push_back(std::move(arg));
      if (Accept(TokenType::kRParen)) return true;
      if (!Expect(TokenType::kComma, "',' or ')'")) return false;
    }
  }

  NodePtr ReceiverCall(NodePtr target, std::string name, uint32_t at) {
    std::vector<NodePtr> args;
    if (!Arguments(&args)) return nullptr;
    Macro macro = Macro::kNone;
    if (name == "all" && args.size() == 2) macro = Macro::kAll;
    if (name == "exists" && args.size() == 2) macro = Macro::kExists;
    if (name == "exists_one" && args.size() == 2) macro = Macro::kExistsOne;
    if (name == "map" && args.size() == 2) macro = Macro::kMap;
    if (name == "map" && args.size() == 3) macro = Macro::kMapFilter;
    if (name == "filter" && args.size() == 2) macro = Macro::kFilter;
    if (macro != Macro::kNone) {
      if (args[0]->kind != NodeKind::kIdent) return Fail(args[0]->offset, name + "() needs a variable name as its first argument");
      std::string var = args[0]->name;
      std::vector<NodePtr> children;
      children.push_back(std::move(target));
      for (size_t i = 1; i < args.size(); ++i) children.push_back(std::move(args[i]));
      NodePtr node = Make(NodeKind::kComprehension, at, std::move(children));
      if (node) {
        node->macro = macro;
        node->iter_var = std::move(var);
        node->name = std::move(name);
      }
      return node;
    }
    std::vector<NodePtr> children;
    children.push_back(std::move(target));
    for (auto& a : args) children.push_back(std::move(a));
    NodePtr node = Call(std::move(name), at, std::move(children));
    if (node) node->receiver_style = true;
    return node;
  }

  NodePtr Primary() {
    const Token& token = Peek();
    uint32_t at = token.offset;
    switch (token.type) {
      case TokenType::kInt: {
        Take();
        if (token.int_magnitude > uint64_t(std::numeric_limits<int64_t>::max())) return Fail(at, "int literal out of range");
        NodePtr n = Make(NodeKind::kConstant, at);
        if (n) n->constant = Value::Int(int64_t(token.int_magnitude));
        return n;
      }
      case TokenType::kUint: case TokenType::kDouble: case TokenType::kString: case TokenType::kBytes: {
        Take();
        NodePtr n = Make(NodeKind::kConstant, at);
        if (n) n->constant = token.literal;
        return n;
      }
      case TokenType::kTrue: case TokenType::kFalse: case TokenType::kNull: {
        Take();
        NodePtr n = Make(NodeKind::kConstant, at);
        if (n) n->constant = token.type == TokenType::kNull ? Value::Null() : Value::Bool(token.type == TokenType::kTrue);
        return n;
      }
      case TokenType::kLParen: {
        Take();
        NodePtr inner = Expr();
        if (!inner || !Expect(TokenType::kRParen, "')'")) return nullptr;
        return inner;
      }
      case TokenType::kLBracket: return ListLiteral();
      case TokenType::kLBrace: return MapLiteral();
      case TokenType::kDot:
        // A leading dot names the root scope; with no containers that is the plain name.
        Take();
        if (Peek().type != TokenType::kIdent) return Fail(Peek().offset, "expected a name after '.'");
        return Identifier();
      case TokenType::kIdent: return Identifier();
      case TokenType::kEnd: return Fail(at, "unexpected end of expression");
      default: return Fail(at, "unexpected token");
    }
  }

  NodePtr Identifier() {
    const Token& token = Take();
    uint32_t at = token.offset;
    if (token.reserved) return Fail(at, "reserved identifier '" + std::string(token.text) + "'");
    std::string name(token.text);
    if (Peek().type != TokenType::kLParen) {
      NodePtr n = Make(NodeKind::kIdent, at);
      if (n) n->name = std::move(name);
      return n;
    }
    std::vector<NodePtr> args;
    if (!Arguments(&args)) return nullptr;
    if (name == "has" && args.size() == 1) {
      if (args[0]->kind != NodeKind::kSelect) return Fail(at, "has() needs a field selection argument, like has(a.b)");
      NodePtr select = std::move(args[0]);
      std::vector<NodePtr> children;
      children.push_back(std::move(select->children[0]));
      NodePtr n = Make(NodeKind::kHas, at, std::move(children));
      if (n) n->name = std::move(select->name);
      return n;
    }
    return Call(std::move(name), at, std::move(args));
  }

  NodePtr ListLiteral() {
    uint32_t at = Take().offset;
    std::vector<NodePtr> items;
    while (!Accept(TokenType::kRBracket)) {
      if (Peek().type == TokenType::kQuestion) return Fail(Peek().offset, "optional list elements are not supported");
      NodePtr item = Expr();
      if (!item) return nullptr;
      items.push_back(std::move(item));
      if (Accept(TokenType::kRBracket)) break;
      if (!Expect(TokenType::kComma, "',' or ']'")) return nullptr;
    }
    return Make(NodeKind::kList, at, std::move(items));
  }

  NodePtr MapLiteral() {
    uint32_t at = Take().offset;
    std::vector<NodePtr> items;
    while (!Accept(TokenType::kRBrace)) {
      if (Peek().type == TokenType::kQuestion) return Fail(Peek().offset, "optional map entries are not supported");
      NodePtr key = Expr();
      if (!key || !Expect(TokenType::kColon, "':' in a map literal")) return nullptr;
      NodePtr value = Expr();
      if (!value) return nullptr;
      items.push_back(std::move(key));
      items.push_back(std::move(value));
      if (Accept(TokenType::kRBrace)) break;
      if (!Expect(TokenType::kComma, "',' or '}'")) return nullptr;
    }
    return Make(NodeKind::kMap, at, std::move(items));
  }

  std::vector<Token> tokens_;
  const Limits& limits_;
  SourceError* error_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool failed_ = false;
  std::unordered_map<const Node*, int> heights_;
};

}  // namespace

NodePtr Parse(std::string_view source, const Limits& limits, SourceError* error) {
  if (source.size() > limits.max_source_bytes) {
    error->message = "expression longer than " + std::to_string(limits.max_source_bytes) + " bytes";
    error->offset = 0;
    return nullptr;
  }
  std::vector<Token> tokens;
  if (!Tokenize(source, &tokens, error)) return nullptr;
  return Parser(std::move(tokens), limits, error).ParseAll();
}

}  // namespace cairn::cel
