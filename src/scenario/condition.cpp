// The condition language: tokenizer, precedence-climbing parser, tree-walking evaluator.
// Nothing here executes anything but the operators and the nine functions of the language.
#include "fieldproof/scenario/condition.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numbers>

namespace fieldproof::scenario {

// ---------------------------------------------------------------------------------------------
// Value

bool Value::truthy() const {
  switch (kind()) {
    case Kind::kNull:
      return false;
    case Kind::kBool:
      return as_bool();
    case Kind::kNumber:
      return as_number() != 0.0;  // NaN != 0 is true: nan is truthy, as in Python
    case Kind::kString:
      return !as_string().empty();
    case Kind::kList:
      return !as_list().empty();
    case Kind::kMap:
      return !as_map().empty();
  }
  return false;
}

namespace {
std::string number_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == std::trunc(d) && std::fabs(d) < 1e16) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", d);
    return buf;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  // Prefer the shortest text that reads back to the same double.
  for (int precision = 1; precision <= 17; ++precision) {
    char shorter[40];
    std::snprintf(shorter, sizeof shorter, "%.*g", precision, d);
    if (std::strtod(shorter, nullptr) == d) return shorter;
  }
  return buf;
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}
}  // namespace

std::string Value::repr() const {
  switch (kind()) {
    case Kind::kNull:
      return "None";
    case Kind::kBool:
      return as_bool() ? "True" : "False";
    case Kind::kNumber:
      return number_repr(as_number());
    case Kind::kString:
      return quote(as_string());
    case Kind::kList: {
      std::string out = "[";
      bool first = true;
      for (const auto& v : as_list()) {
        if (!first) out += ", ";
        first = false;
        out += v.repr();
      }
      return out + "]";
    }
    case Kind::kMap: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, v] : as_map()) {
        if (!first) out += ", ";
        first = false;
        out += quote(k) + ": " + v.repr();
      }
      return out + "}";
    }
  }
  return "?";
}

const char* Value::kind_name(Kind k) {
  switch (k) {
    case Kind::kNull:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kNumber:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kList:
      return "list";
    case Kind::kMap:
      return "dict";
  }
  return "?";
}

namespace {
bool numeric(const Value& v) { return v.is_number() || v.is_bool(); }
double num(const Value& v) { return v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : v.as_number(); }
}  // namespace

bool operator==(const Value& a, const Value& b) {
  if (numeric(a) && numeric(b)) return num(a) == num(b);
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kNull:
      return true;
    case Value::Kind::kString:
      return a.as_string() == b.as_string();
    case Value::Kind::kList:
      return a.as_list() == b.as_list();
    case Value::Kind::kMap:
      return a.as_map() == b.as_map();
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Tokens

namespace {

enum class Tok {
  kEnd,
  kNumber,
  kString,
  kName,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kComma,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kRefused,  // a token of Python the language does not accept; text says which
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // name, string contents, operator text
  double number = 0;
  int column = 1;  // 1-based
};

constexpr std::array<std::string_view, 9> kFunctions = {"abs", "min",   "max", "round", "sqrt",
                                                        "len", "float", "int", "isnan"};
// isinf is the tenth; kept separately so the array above stays readable.
constexpr std::string_view kIsinf = "isinf";
constexpr std::array<std::string_view, 3> kConstants = {"pi", "inf", "nan"};
constexpr std::array<std::string_view, 35> kPythonKeywords = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};

bool is_function(std::string_view n) {
  return n == kIsinf || std::find(kFunctions.begin(), kFunctions.end(), n) != kFunctions.end();
}
bool is_constant(std::string_view n) {
  return std::find(kConstants.begin(), kConstants.end(), n) != kConstants.end();
}
bool is_keyword(std::string_view n) {
  return std::find(kPythonKeywords.begin(), kPythonKeywords.end(), n) != kPythonKeywords.end();
}
bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string at(int column, const std::string& msg) {
  return "column " + std::to_string(column) + ": " + msg;
}

struct LexResult {
  std::vector<Token> tokens;
  std::optional<ConditionError> error;
};

ConditionError lex_error(int col, const std::string& msg) {
  return ConditionError{at(col, msg), col};
}

// A number starting at s[i] (a digit, or '.' before one): its token, i past it.
std::optional<ConditionError> lex_number(std::string_view s, size_t& i, Token& t) {
  const int col = static_cast<int>(i) + 1;
  size_t j = i;
  while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
  if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
    size_t k = j + 1;
    if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
    if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
      j = k;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    }
  }
  std::string text(s.substr(i, j - i));
  double d = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec != std::errc() || p != text.data() + text.size()) {
    if (ec == std::errc::result_out_of_range) {
      d = HUGE_VAL;
    } else {
      return lex_error(col, "'" + text + "' is not a number");
    }
  }
  if (j < s.size() && ident_char(s[j])) {
    return lex_error(col, "'" + std::string(s.substr(i, j + 1 - i)) +
                              "' is not a number (hex, octal, binary, complex and _ digit "
                              "separators are not supported)");
  }
  t.kind = Tok::kNumber;
  t.number = d;
  t.text = text;
  i = j;
  return std::nullopt;
}

// A name starting at s[i]: its token, i past it.
std::optional<ConditionError> lex_name(std::string_view s, size_t& i, Token& t) {
  size_t j = i;
  while (j < s.size() && ident_char(s[j])) ++j;
  t.text = std::string(s.substr(i, j - i));
  if (j < s.size() && (s[j] == '\'' || s[j] == '"')) {
    return lex_error(static_cast<int>(i) + 1, "string prefixes such as " + t.text +
                                                  "'...' are not allowed; write a plain 'string'");
  }
  t.kind = Tok::kName;
  i = j;
  return std::nullopt;
}

// A quoted string starting at s[i] (its quote): its token with the escapes resolved, i past it.
std::optional<ConditionError> lex_string(std::string_view s, size_t& i, Token& t) {
  const char quote = s[i];
  size_t j = i + 1;
  std::string out;
  bool closed = false;
  while (j < s.size()) {
    char d = s[j];
    if (d == '\\') {
      if (j + 1 >= s.size()) break;
      char e = s[j + 1];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case '\\':
        case '\'':
        case '"':
          out += e;
          break;
        default:
          return lex_error(static_cast<int>(j) + 1,
                           std::string("unsupported escape \\") + e + " in a string");
      }
      j += 2;
      continue;
    }
    if (d == quote) {
      closed = true;
      ++j;
      break;
    }
    if (d == '\n') break;
    out += d;
    ++j;
  }
  if (!closed) return lex_error(static_cast<int>(i) + 1, "this string is not closed");
  t.kind = Tok::kString;
  t.text = std::move(out);
  i = j;
  return std::nullopt;
}

// The operator or punctuation at s[i]: its token, i past it. What the language does not have
// is a kRefused token, which the parser explains.
void lex_operator(std::string_view s, size_t& i, Token& t) {
  const std::string_view two = s.substr(i, 2);
  static constexpr std::pair<std::string_view, Tok> kPairs[] = {
      {"==", Tok::kEq},      {"!=", Tok::kNe},      {"<=", Tok::kLe},      {">=", Tok::kGe},
      {"**", Tok::kRefused}, {"//", Tok::kRefused}, {"<<", Tok::kRefused}, {">>", Tok::kRefused},
      {":=", Tok::kRefused}, {"->", Tok::kRefused}};
  for (const auto& [text, kind] : kPairs) {
    if (two == text) {
      t.kind = kind;
      t.text = std::string(two);
      i += 2;
      return;
    }
  }
  static constexpr std::pair<char, Tok> kSingles[] = {
      {'(', Tok::kLParen}, {')', Tok::kRParen},  {'[', Tok::kLBracket}, {']', Tok::kRBracket},
      {',', Tok::kComma},  {'+', Tok::kPlus},    {'-', Tok::kMinus},    {'*', Tok::kStar},
      {'/', Tok::kSlash},  {'%', Tok::kPercent}, {'<', Tok::kLt},       {'>', Tok::kGt}};
  const char c = s[i];
  // . = { } : ; & | ^ ~ @ ! ` $ ? \ and anything else: refused by the parser with its own
  // explanation.
  t.kind = Tok::kRefused;
  for (const auto& [ch, kind] : kSingles) {
    if (c == ch) t.kind = kind;
  }
  t.text = std::string(1, c);
  ++i;
}

LexResult tokenize(std::string_view s) {
  LexResult r;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    Token t;
    t.column = static_cast<int>(i) + 1;
    std::optional<ConditionError> error;
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      error = lex_number(s, i, t);
    } else if (ident_start(c)) {
      error = lex_name(s, i, t);
    } else if (c == '\'' || c == '"') {
      error = lex_string(s, i, t);
    } else {
      lex_operator(s, i, t);
    }
    if (error) {
      r.error = std::move(error);
      return r;
    }
    r.tokens.push_back(std::move(t));
  }
  Token end;
  end.kind = Tok::kEnd;
  end.column = static_cast<int>(s.size()) + 1;
  r.tokens.push_back(end);
  return r;
}

std::string refusal_reason(const Token& t) {
  const std::string& x = t.text;
  if (x == ".") return "attribute access ('.') is not allowed; index fields with [\"name\"]";
  if (x == "**") return "'**' (power) is not allowed";
  if (x == "//") return "'//' (floor division) is not allowed; use int(a / b)";
  if (x == "=") return "assignment ('=') is not allowed; compare with '=='";
  if (x == ":=") return "assignment (':=') is not allowed";
  if (x == ":") return "':' (slices, dict displays, lambdas) is not allowed";
  if (x == "{" || x == "}") return "dict and set displays are not allowed";
  if (x == "&" || x == "|" || x == "^" || x == "~" || x == "<<" || x == ">>")
    return "bitwise operator '" + x + "' is not allowed; use and, or, not";
  if (x == "!") return "'!' is not allowed; use not";
  if (x == ";") return "only one expression is allowed (no ';')";
  if (x == "@") return "'@' is not allowed";
  if (x == "\\") return "'\\' is not allowed";
  return "'" + x + "' is not allowed in a condition";
}

// ---------------------------------------------------------------------------------------------
// The tree

enum class Op {
  kConst,
  kVar,
  kList,
  kNeg,
  kPos,
  kNot,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kAnd,
  kOr,
  kCompare,  // chained: args are operands, cmp are the operators between them
  kIfElse,   // args: body, test, orelse
  kIndex,    // args: object, index
  kCall,
};

enum class Cmp { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kNotIn, kIs, kIsNot };

enum class Fn { kAbs, kMin, kMax, kRound, kSqrt, kLen, kFloat, kInt, kIsnan, kIsinf };

struct Node {
  Op op = Op::kConst;
  int column = 1;
  Value constant;
  int slot = -1;
  Fn fn = Fn::kAbs;
  std::vector<int> args;
  std::vector<Cmp> cmps;
  std::vector<int> cmp_columns;
};

}  // namespace

namespace detail {
struct ConditionProgram {
  std::string text;
  std::vector<std::string> names;
  std::vector<bool> read;
  std::vector<Node> nodes;
  int root = 0;
  // True when every node is numeric (no strings, lists, None, indexing, in, is, len): holds()
  // then evaluates on doubles when every variable is a number or a bool.
  bool numeric_only = false;
};
}  // namespace detail

namespace {

constexpr int kMaxConditionDepth = 100;
constexpr size_t kMaxConditionLength = 4096;

class ParseFailure {
 public:
  ConditionError error;
};

class Parser {
 public:
  Parser(std::vector<Token> tokens, detail::ConditionProgram& prog)
      : t_(std::move(tokens)), prog_(prog) {}

  int parse() {
    const Token& first = peek();
    if (first.kind == Tok::kEnd) fail(first.column, "the condition is empty");
    int root = conditional();
    const Token& rest = peek();
    if (rest.kind != Tok::kEnd) {
      if (rest.kind == Tok::kRefused) fail(rest.column, refusal_reason(rest));
      if (rest.kind == Tok::kName && rest.text == "for")
        fail(rest.column, "comprehensions are not allowed");
      fail(rest.column, "unexpected " + describe(rest) + " after a complete expression");
    }
    return root;
  }

 private:
  [[noreturn]] void fail(int column, const std::string& msg) {
    throw ParseFailure{ConditionError{at(column, msg), column}};
  }

  // Bounds the recursion (and so the evaluator's) on hostile input such as 10^5 parentheses.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxConditionDepth) {
        p_.fail(p_.peek().column, "the condition nests more than " +
                                      std::to_string(kMaxConditionDepth) + " levels deep");
      }
    }
    ~DepthGuard() { --p_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& p_;
  };

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::kEnd:
        return "the end of the condition";
      case Tok::kNumber:
        return "number " + t.text;
      case Tok::kString:
        return "string '" + t.text + "'";
      case Tok::kName:
        return "'" + t.text + "'";
      default:
        return "'" + t.text + "'";
    }
  }

  const Token& peek(size_t ahead = 0) const { return t_[std::min(pos_ + ahead, t_.size() - 1)]; }
  Token take() {
    Token t = peek();
    if (pos_ < t_.size() - 1) ++pos_;
    return t;
  }
  bool is_name(const Token& t, std::string_view n) const {
    return t.kind == Tok::kName && t.text == n;
  }
  void expect(Tok k, const char* what) {
    const Token& t = peek();
    if (t.kind == k) {
      take();
      return;
    }
    if (t.kind == Tok::kRefused) fail(t.column, refusal_reason(t));
    fail(t.column, std::string("expected ") + what + ", found " + describe(t));
  }

  int add(Node n) {
    prog_.nodes.push_back(std::move(n));
    return static_cast<int>(prog_.nodes.size()) - 1;
  }

  // conditional: or_expr ['if' or_expr 'else' conditional]
  int conditional() {
    DepthGuard guard(*this);
    const Token& lam = peek();
    if (is_name(lam, "lambda")) fail(lam.column, "lambdas are not allowed");
    int body = or_expr();
    if (is_name(peek(), "if")) {
      Token kw = take();
      int test = or_expr();
      if (!is_name(peek(), "else")) {
        fail(peek().column, "a conditional expression needs 'else' (a if condition else b)");
      }
      take();
      int orelse = conditional();
      Node n;
      n.op = Op::kIfElse;
      n.column = kw.column;
      n.args = {body, test, orelse};
      return add(std::move(n));
    }
    return body;
  }

  int or_expr() {
    int left = and_expr();
    while (is_name(peek(), "or")) {
      Token kw = take();
      int right = and_expr();
      Node n;
      n.op = Op::kOr;
      n.column = kw.column;
      n.args = {left, right};
      left = add(std::move(n));
    }
    return left;
  }

  int and_expr() {
    int left = not_expr();
    while (is_name(peek(), "and")) {
      Token kw = take();
      int right = not_expr();
      Node n;
      n.op = Op::kAnd;
      n.column = kw.column;
      n.args = {left, right};
      left = add(std::move(n));
    }
    return left;
  }

  int not_expr() {
    DepthGuard guard(*this);
    if (is_name(peek(), "not")) {
      Token kw = take();
      int operand = not_expr();
      Node n;
      n.op = Op::kNot;
      n.column = kw.column;
      n.args = {operand};
      return add(std::move(n));
    }
    return comparison();
  }

  std::optional<Cmp> comparison_operator(int* column) {
    const Token& t = peek();
    *column = t.column;
    switch (t.kind) {
      case Tok::kEq:
        take();
        return Cmp::kEq;
      case Tok::kNe:
        take();
        return Cmp::kNe;
      case Tok::kLt:
        take();
        return Cmp::kLt;
      case Tok::kLe:
        take();
        return Cmp::kLe;
      case Tok::kGt:
        take();
        return Cmp::kGt;
      case Tok::kGe:
        take();
        return Cmp::kGe;
      default:
        break;
    }
    if (is_name(t, "in")) {
      take();
      return Cmp::kIn;
    }
    if (is_name(t, "not") && is_name(peek(1), "in")) {
      take();
      take();
      return Cmp::kNotIn;
    }
    if (is_name(t, "is")) {
      take();
      if (is_name(peek(), "not")) {
        take();
        return Cmp::kIsNot;
      }
      return Cmp::kIs;
    }
    return std::nullopt;
  }

  int comparison() {
    int first = arith(0);
    int column = 0;
    auto op = comparison_operator(&column);
    if (!op) return first;
    Node n;
    n.op = Op::kCompare;
    n.column = column;
    n.args.push_back(first);
    while (op) {
      n.cmps.push_back(*op);
      n.cmp_columns.push_back(column);
      n.args.push_back(arith(0));
      op = comparison_operator(&column);
    }
    return add(std::move(n));
  }

  // Binary arithmetic by precedence climbing: + - (1) below * / % (2); all left-associative.
  static int precedence(Tok k) {
    switch (k) {
      case Tok::kPlus:
      case Tok::kMinus:
        return 1;
      case Tok::kStar:
      case Tok::kSlash:
      case Tok::kPercent:
        return 2;
      default:
        return 0;
    }
  }

  int arith(int min_prec) {
    int left = unary();
    for (;;) {
      const Token& t = peek();
      // Refused binary operators (** // & | ^ << >> = ...) in operator position.
      if (t.kind == Tok::kRefused) fail(t.column, refusal_reason(t));
      int prec = precedence(t.kind);
      if (prec == 0 || prec < min_prec) break;
      Token op = take();
      int right = arith(prec + 1);
      Node n;
      n.column = op.column;
      switch (op.kind) {
        case Tok::kPlus:
          n.op = Op::kAdd;
          break;
        case Tok::kMinus:
          n.op = Op::kSub;
          break;
        case Tok::kStar:
          n.op = Op::kMul;
          break;
        case Tok::kSlash:
          n.op = Op::kDiv;
          break;
        default:
          n.op = Op::kMod;
          break;
      }
      n.args = {left, right};
      left = add(std::move(n));
    }
    return left;
  }

  int unary() {
    DepthGuard guard(*this);
    const Token& t = peek();
    if (t.kind == Tok::kMinus || t.kind == Tok::kPlus) {
      Token op = take();
      int operand = unary();
      Node n;
      n.op = op.kind == Tok::kMinus ? Op::kNeg : Op::kPos;
      n.column = op.column;
      n.args = {operand};
      return add(std::move(n));
    }
    if (t.kind == Tok::kStar) fail(t.column, "starred expressions are not allowed");
    return postfix();
  }

  int postfix() {
    int node = atom();
    for (;;) {
      const Token& t = peek();
      if (t.kind == Tok::kLBracket) {
        Token open = take();
        if (peek().kind == Tok::kRefused && peek().text == ":")
          fail(peek().column, "slices are not allowed");
        int index = conditional();
        if (peek().kind == Tok::kRefused && peek().text == ":")
          fail(peek().column, "slices are not allowed");
        if (peek().kind == Tok::kComma)
          fail(peek().column, "index with one value: x[0] or x['key']");
        expect(Tok::kRBracket, "']'");
        Node n;
        n.op = Op::kIndex;
        n.column = open.column;
        n.args = {node, index};
        node = add(std::move(n));
      } else if (t.kind == Tok::kRefused && t.text == ".") {
        fail(t.column, refusal_reason(t));
      } else if (t.kind == Tok::kLParen) {
        fail(t.column,
             "only the functions abs, min, max, round, sqrt, len, float, int, isnan and "
             "isinf can be called");
      } else {
        return node;
      }
    }
  }

  int call(const Token& name) {
    take();  // '('
    Node n;
    n.op = Op::kCall;
    n.column = name.column;
    static const std::map<std::string_view, Fn> kFn = {
        {"abs", Fn::kAbs},     {"min", Fn::kMin},    {"max", Fn::kMax},     {"round", Fn::kRound},
        {"sqrt", Fn::kSqrt},   {"len", Fn::kLen},    {"float", Fn::kFloat}, {"int", Fn::kInt},
        {"isnan", Fn::kIsnan}, {"isinf", Fn::kIsinf}};
    n.fn = kFn.at(name.text);
    if (peek().kind != Tok::kRParen) {
      for (;;) {
        const Token& a = peek();
        if (a.kind == Tok::kStar) fail(a.column, "starred arguments are not allowed");
        if (a.kind == Tok::kName && peek(1).kind == Tok::kRefused && peek(1).text == "=") {
          fail(a.column, "keyword arguments are not allowed");
        }
        n.args.push_back(conditional());
        if (is_name(peek(), "for")) fail(peek().column, "comprehensions are not allowed");
        if (peek().kind != Tok::kComma) break;
        take();
        if (peek().kind == Tok::kRParen) break;
      }
    }
    expect(Tok::kRParen, "',' or ')'");
    size_t argc = n.args.size();
    auto arity = [&](size_t lo, size_t hi, const char* form) {
      if (argc < lo || argc > hi) fail(name.column, name.text + " takes " + form);
    };
    switch (n.fn) {
      case Fn::kMin:
      case Fn::kMax:
        arity(1, 1000, "one list or two or more values");
        break;
      case Fn::kRound:
        arity(1, 2, "one or two arguments: round(x) or round(x, digits)");
        break;
      default:
        arity(1, 1, "exactly one argument");
        break;
    }
    return add(std::move(n));
  }

  int display(Tok close, const Token& open) {
    Node n;
    n.op = Op::kList;
    n.column = open.column;
    bool tuple_comma = false;
    if (peek().kind != close) {
      for (;;) {
        n.args.push_back(conditional());
        if (is_name(peek(), "for")) fail(peek().column, "comprehensions are not allowed");
        if (peek().kind != Tok::kComma) break;
        take();
        tuple_comma = true;
        if (peek().kind == close) break;
      }
    }
    expect(close, close == Tok::kRParen ? "')'" : "']'");
    if (close == Tok::kRParen && n.args.size() == 1 && !tuple_comma) return n.args[0];
    return add(std::move(n));
  }

  int atom() {
    Token t = peek();
    switch (t.kind) {
      case Tok::kNumber: {
        take();
        Node n;
        n.column = t.column;
        n.constant = Value(t.number);
        return add(std::move(n));
      }
      case Tok::kString: {
        take();
        Node n;
        n.column = t.column;
        n.constant = Value(t.text);
        return add(std::move(n));
      }
      case Tok::kLParen: {
        take();
        return display(Tok::kRParen, t);
      }
      case Tok::kLBracket: {
        take();
        return display(Tok::kRBracket, t);
      }
      case Tok::kName:
        return name_atom(t);
      case Tok::kEnd:
        fail(t.column, "the condition ends where a value is expected");
      case Tok::kRefused:
        fail(t.column, refusal_reason(t));
      default:
        fail(t.column, "expected a value, found " + describe(t));
    }
  }

  int name_atom(const Token& t) {
    const std::string& n = t.text;
    Node node;
    node.column = t.column;
    if (n == "True" || n == "False") {
      take();
      node.constant = Value(n == "True");
      return add(std::move(node));
    }
    if (n == "None") {
      take();
      return add(std::move(node));
    }
    if (n == "lambda") fail(t.column, "lambdas are not allowed");
    if (n == "for") fail(t.column, "comprehensions are not allowed");
    if (n == "not") fail(t.column, "'not' cannot appear here");
    if (is_keyword(n)) fail(t.column, "'" + n + "' is not allowed in a condition");
    if (is_function(n)) {
      take();
      if (peek().kind != Tok::kLParen) {
        fail(t.column, "the function " + n + " must be called: " + n + "(...)");
      }
      return call(t);
    }
    if (is_constant(n)) {
      take();
      if (n == "pi") node.constant = Value(std::numbers::pi);
      if (n == "inf") node.constant = Value(HUGE_VAL);
      if (n == "nan") node.constant = Value(std::nan(""));
      return add(std::move(node));
    }
    auto it = std::find(prog_.names.begin(), prog_.names.end(), n);
    if (it == prog_.names.end()) {
      std::string allowed;
      for (const auto& a : prog_.names) allowed += (allowed.empty() ? "" : ", ") + a;
      if (peek(1).kind == Tok::kLParen) {
        fail(t.column, "'" + n +
                           "' is not a function of the language (abs, min, max, round, "
                           "sqrt, len, float, int, isnan, isinf)");
      }
      fail(t.column, "unknown name '" + n + "'" +
                         (allowed.empty() ? std::string("; this condition reads no names")
                                          : "; the condition may read " + allowed) +
                         " and the constants pi, inf, nan, True, False, None");
    }
    take();
    node.op = Op::kVar;
    node.slot = static_cast<int>(it - prog_.names.begin());
    prog_.read[node.slot] = true;
    return add(std::move(node));
  }

  std::vector<Token> t_;
  size_t pos_ = 0;
  int depth_ = 0;
  detail::ConditionProgram& prog_;
};

// ---------------------------------------------------------------------------------------------
// Evaluation

using R = Evaluated<Value>;

R err(int column, const std::string& msg) { return R::failure({at(column, msg), column}); }

std::string kind_of(const Value& v) { return Value::kind_name(v.kind()); }

class Evaluator {
 public:
  Evaluator(const detail::ConditionProgram& p, std::span<const Value> slots,
            const std::vector<bool>* present)
      : p_(p), slots_(slots), present_(present) {}

  R eval(int i) const {
    const Node& n = p_.nodes[i];
    switch (n.op) {
      case Op::kConst:
        return n.constant;
      case Op::kVar:
        if (present_ != nullptr && !(*present_)[n.slot]) {
          return err(n.column, p_.names[n.slot] + " has no value");
        }
        return slots_[n.slot];
      case Op::kList: {
        Value::List out;
        out.reserve(n.args.size());
        for (int a : n.args) {
          R r = eval(a);
          if (!r) return r;
          out.push_back(*r);
        }
        return Value(std::move(out));
      }
      case Op::kNeg:
      case Op::kPos: {
        R r = eval(n.args[0]);
        if (!r) return r;
        if (!numeric(*r)) {
          return err(n.column, std::string("bad operand type for unary ") +
                                   (n.op == Op::kNeg ? "-" : "+") + ": " + kind_of(*r));
        }
        return Value(n.op == Op::kNeg ? -num(*r) : num(*r));
      }
      case Op::kNot: {
        R r = eval(n.args[0]);
        if (!r) return r;
        return Value(!r->truthy());
      }
      case Op::kAnd:
      case Op::kOr: {
        R l = eval(n.args[0]);
        if (!l) return l;
        bool t = l->truthy();
        if (n.op == Op::kAnd ? !t : t) return l;  // short-circuit: the right side is not run
        return eval(n.args[1]);
      }
      case Op::kIfElse: {
        R test = eval(n.args[1]);
        if (!test) return test;
        return eval(test->truthy() ? n.args[0] : n.args[2]);
      }
      case Op::kAdd:
      case Op::kSub:
      case Op::kMul:
      case Op::kDiv:
      case Op::kMod:
        return arithmetic(n);
      case Op::kCompare:
        return compare(n);
      case Op::kIndex:
        return index(n);
      case Op::kCall:
        return call(n);
    }
    return err(n.column, "internal error: unknown node");
  }

 private:
  R arithmetic(const Node& n) const {
    R l = eval(n.args[0]);
    if (!l) return l;
    R r = eval(n.args[1]);
    if (!r) return r;
    const Value& a = *l;
    const Value& b = *r;
    static constexpr const char* kSym[] = {"+", "-", "*", "/", "%"};
    const char* sym = kSym[static_cast<int>(n.op) - static_cast<int>(Op::kAdd)];
    if (n.op == Op::kAdd && a.is_string() && b.is_string()) {
      return Value(a.as_string() + b.as_string());
    }
    if (n.op == Op::kAdd && a.is_list() && b.is_list()) {
      Value::List out = a.as_list();
      out.insert(out.end(), b.as_list().begin(), b.as_list().end());
      return Value(std::move(out));
    }
    if (!numeric(a) || !numeric(b)) {
      return err(n.column, std::string("unsupported operand types for ") + sym + ": " + kind_of(a) +
                               " and " + kind_of(b));
    }
    double x = num(a);
    double y = num(b);
    switch (n.op) {
      case Op::kAdd:
        return Value(x + y);
      case Op::kSub:
        return Value(x - y);
      case Op::kMul:
        return Value(x * y);
      case Op::kDiv:
        if (y == 0) return err(n.column, "division by zero");
        return Value(x / y);
      default: {
        if (y == 0) return err(n.column, "modulo by zero");
        // Python's %: the result takes the sign of the divisor.
        double m = std::fmod(x, y);
        if (m != 0 && ((m < 0) != (y < 0))) m += y;
        return Value(m);
      }
    }
  }

  static Evaluated<bool> compare_one(Cmp c, const Value& a, const Value& b, int column) {
    using E = Evaluated<bool>;
    auto fail = [&](const std::string& m) { return E::failure({at(column, m), column}); };
    switch (c) {
      case Cmp::kEq:
        return a == b;
      case Cmp::kNe:
        return !(a == b);
      case Cmp::kIs:
      case Cmp::kIsNot: {
        bool same = false;
        if (a.is_null() || b.is_null()) {
          same = a.is_null() && b.is_null();
        } else if (a.is_bool() || b.is_bool()) {
          same = a.is_bool() && b.is_bool() && a.as_bool() == b.as_bool();
        } else {
          same = a.kind() == b.kind() && a == b;
        }
        return c == Cmp::kIs ? same : !same;
      }
      case Cmp::kIn:
      case Cmp::kNotIn: {
        bool found = false;
        if (b.is_list()) {
          for (const auto& e : b.as_list()) {
            if (e == a) {
              found = true;
              break;
            }
          }
        } else if (b.is_string()) {
          if (!a.is_string()) {
            return fail("'in <string>' requires a string on the left, not " + kind_of(a));
          }
          found = b.as_string().find(a.as_string()) != std::string::npos;
        } else if (b.is_map()) {
          if (!a.is_string()) return fail("a dict's keys are strings, not " + kind_of(a));
          found = b.as_map().count(a.as_string()) > 0;
        } else {
          return fail("argument of type " + kind_of(b) + " is not a container for 'in'");
        }
        return c == Cmp::kIn ? found : !found;
      }
      default:
        break;
    }
    int order = 0;
    bool nan = false;
    if (numeric(a) && numeric(b)) {
      double x = num(a);
      double y = num(b);
      if (std::isnan(x) || std::isnan(y)) {
        nan = true;
      } else {
        order = x < y ? -1 : (x > y ? 1 : 0);
      }
    } else if (a.is_string() && b.is_string()) {
      int k = a.as_string().compare(b.as_string());
      order = k < 0 ? -1 : (k > 0 ? 1 : 0);
    } else {
      static constexpr const char* kSym[] = {"==", "!=", "<", "<=", ">", ">="};
      return fail(std::string("'") + kSym[static_cast<int>(c)] + "' is not supported between " +
                  kind_of(a) + " and " + kind_of(b));
    }
    if (nan) return false;  // IEEE: every ordering with NaN is false
    switch (c) {
      case Cmp::kLt:
        return order < 0;
      case Cmp::kLe:
        return order <= 0;
      case Cmp::kGt:
        return order > 0;
      default:
        return order >= 0;
    }
  }

  R compare(const Node& n) const {
    R left = eval(n.args[0]);
    if (!left) return left;
    Value a = *left;
    for (size_t k = 0; k < n.cmps.size(); ++k) {
      R right = eval(n.args[k + 1]);
      if (!right) return right;
      auto res = compare_one(n.cmps[k], a, *right, n.cmp_columns[k]);
      if (!res) return R::failure(res.error());
      if (!*res) return Value(false);  // a chain stops at its first false link
      a = *right;
    }
    return Value(true);
  }

  R index(const Node& n) const {
    R obj = eval(n.args[0]);
    if (!obj) return obj;
    R idx = eval(n.args[1]);
    if (!idx) return idx;
    const Value& o = *obj;
    const Value& i = *idx;
    if (o.is_list() || o.is_string()) {
      if (!numeric(i) || std::isnan(num(i)) || num(i) != std::trunc(num(i))) {
        return err(n.column, kind_of(o) + " indices must be integers, not " + i.repr());
      }
      double k = num(i);
      double size = static_cast<double>(o.is_list() ? o.as_list().size() : o.as_string().size());
      if (k < 0) k += size;
      if (k < 0 || k >= size) {
        return err(n.column, kind_of(o) + " index " + i.repr() + " out of range (length " +
                                 number_repr(size) + ")");
      }
      auto pos = static_cast<size_t>(k);
      if (o.is_list()) return o.as_list()[pos];
      return Value(std::string(1, o.as_string()[pos]));
    }
    if (o.is_map()) {
      if (!i.is_string()) return err(n.column, "dict keys are strings, not " + i.repr());
      auto it = o.as_map().find(i.as_string());
      if (it == o.as_map().end()) return err(n.column, "no field " + i.repr());
      return it->second;
    }
    return err(n.column, "a " + kind_of(o) + " cannot be indexed");
  }

  R call(const Node& n) const {
    // Up to two arguments live on the stack: a condition is evaluated millions of times.
    std::array<Value, 2> small;
    std::vector<Value> many;
    std::span<const Value> args;
    if (n.args.size() <= small.size()) {
      for (size_t k = 0; k < n.args.size(); ++k) {
        R r = eval(n.args[k]);
        if (!r) return r;
        small[k] = *r;
      }
      args = std::span<const Value>(small.data(), n.args.size());
    } else {
      many.reserve(n.args.size());
      for (int a : n.args) {
        R r = eval(a);
        if (!r) return r;
        many.push_back(*r);
      }
      args = many;
    }
    auto need_number = [&](const char* fname, const Value& v) -> std::optional<R> {
      if (numeric(v)) return std::nullopt;
      return err(n.column, std::string(fname) + "() needs a number, not " + kind_of(v));
    };
    switch (n.fn) {
      case Fn::kAbs: {
        if (auto e = need_number("abs", args[0])) return *e;
        return Value(std::fabs(num(args[0])));
      }
      case Fn::kSqrt: {
        if (auto e = need_number("sqrt", args[0])) return *e;
        double x = num(args[0]);
        if (x < 0) return err(n.column, "sqrt() of a negative number");
        return Value(std::sqrt(x));
      }
      case Fn::kIsnan: {
        if (auto e = need_number("isnan", args[0])) return *e;
        return Value(std::isnan(num(args[0])));
      }
      case Fn::kIsinf: {
        if (auto e = need_number("isinf", args[0])) return *e;
        return Value(std::isinf(num(args[0])));
      }
      case Fn::kLen: {
        const Value& v = args[0];
        if (v.is_string()) return Value(static_cast<double>(v.as_string().size()));
        if (v.is_list()) return Value(static_cast<double>(v.as_list().size()));
        if (v.is_map()) return Value(static_cast<double>(v.as_map().size()));
        return err(n.column, "len() of a " + kind_of(v));
      }
      case Fn::kFloat: {
        const Value& v = args[0];
        if (numeric(v)) return Value(num(v));
        if (v.is_string()) {
          auto parsed = parse_float_text(v.as_string());
          if (parsed) return Value(*parsed);
          return err(n.column, "float() cannot read " + v.repr());
        }
        return err(n.column, "float() of a " + kind_of(v));
      }
      case Fn::kInt: {
        const Value& v = args[0];
        double x = 0;
        if (numeric(v)) {
          x = num(v);
        } else if (v.is_string()) {
          auto parsed = parse_float_text(v.as_string());
          if (!parsed || *parsed != std::trunc(*parsed)) {
            return err(n.column, "int() cannot read " + v.repr());
          }
          x = *parsed;
        } else {
          return err(n.column, "int() of a " + kind_of(v));
        }
        if (std::isnan(x) || std::isinf(x)) {
          return err(n.column, "int() of " + number_repr(x));
        }
        return Value(std::trunc(x));
      }
      case Fn::kRound: {
        if (auto e = need_number("round", args[0])) return *e;
        double x = num(args[0]);
        if (args.size() == 1) {
          if (std::isnan(x) || std::isinf(x)) return err(n.column, "round() of " + number_repr(x));
          return Value(std::nearbyint(x));  // half to even, as Python
        }
        if (!numeric(args[1]) || num(args[1]) != std::trunc(num(args[1]))) {
          return err(n.column, "round()'s digits must be an integer");
        }
        double scale = std::pow(10.0, num(args[1]));
        if (std::isnan(x) || std::isinf(x) || scale == 0 || std::isinf(scale)) return Value(x);
        return Value(std::nearbyint(x * scale) / scale);
      }
      case Fn::kMin:
      case Fn::kMax: {
        const char* fname = n.fn == Fn::kMin ? "min" : "max";
        std::span<const Value> items = args;
        if (args.size() == 1) {
          if (!args[0].is_list()) {
            return err(n.column, std::string(fname) + "() of one argument needs a list");
          }
          items = args[0].as_list();
        }
        if (items.empty()) return err(n.column, std::string(fname) + "() of an empty list");
        Value best = items[0];
        for (size_t k = 1; k < items.size(); ++k) {
          const Value& c = items[k];
          auto less = compare_one(Cmp::kLt, n.fn == Fn::kMin ? c : best,
                                  n.fn == Fn::kMin ? best : c, n.column);
          if (!less) return R::failure(less.error());
          if (*less) best = c;
        }
        return best;
      }
    }
    return err(n.column, "internal error: unknown function");
  }

  static std::optional<double> parse_float_text(const std::string& s) {
    size_t b = s.find_first_not_of(" \t");
    size_t e = s.find_last_not_of(" \t");
    if (b == std::string::npos) return std::nullopt;
    std::string t = s.substr(b, e - b + 1);
    std::string lower;
    for (char c : t) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "nan" || lower == "+nan" || lower == "-nan") return std::nan("");
    if (lower == "inf" || lower == "+inf" || lower == "infinity") return HUGE_VAL;
    if (lower == "-inf" || lower == "-infinity") return -HUGE_VAL;
    double d = 0;
    const char* first = t.data();
    if (*first == '+') ++first;
    auto [p, ec] = std::from_chars(first, t.data() + t.size(), d);
    if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
    return d;
  }

  const detail::ConditionProgram& p_;
  std::span<const Value> slots_;
  const std::vector<bool>* present_;
};

// The numeric fast path: the same semantics as Evaluator on numbers and bools (bools as 0 / 1,
// truthiness as != 0, NaN orderings false), without Value copies. It gives up (returns false) on
// anything that would be an error, so the general path produces the error's message.
bool is_numeric_node(const Node& n) {
  switch (n.op) {
    case Op::kConst:
      return n.constant.is_number() || n.constant.is_bool();
    case Op::kVar:
    case Op::kNeg:
    case Op::kPos:
    case Op::kNot:
    case Op::kAdd:
    case Op::kSub:
    case Op::kMul:
    case Op::kDiv:
    case Op::kMod:
    case Op::kAnd:
    case Op::kOr:
    case Op::kIfElse:
      return true;
    case Op::kCompare:
      for (Cmp c : n.cmps) {
        if (c == Cmp::kIn || c == Cmp::kNotIn || c == Cmp::kIs || c == Cmp::kIsNot) return false;
      }
      return true;
    case Op::kCall:
      if (n.fn == Fn::kLen) return false;
      if ((n.fn == Fn::kMin || n.fn == Fn::kMax) && n.args.size() < 2) return false;
      return true;
    case Op::kList:
    case Op::kIndex:
      return false;
  }
  return false;
}

class NumericEvaluator {
 public:
  NumericEvaluator(const detail::ConditionProgram& p, const double* slots) : p_(p), slots_(slots) {}

  bool eval(int i, double& out) const {
    const Node& n = p_.nodes[i];
    double a = 0;
    double b = 0;
    switch (n.op) {
      case Op::kConst:
        out = num(n.constant);
        return true;
      case Op::kVar:
        out = slots_[n.slot];
        return true;
      case Op::kNeg:
        if (!eval(n.args[0], a)) return false;
        out = -a;
        return true;
      case Op::kPos:
        return eval(n.args[0], out);
      case Op::kNot:
        if (!eval(n.args[0], a)) return false;
        out = a != 0 ? 0.0 : 1.0;
        return true;
      case Op::kAnd:
      case Op::kOr: {
        if (!eval(n.args[0], a)) return false;
        bool t = a != 0;
        if (n.op == Op::kAnd ? !t : t) {
          out = a;
          return true;
        }
        return eval(n.args[1], out);
      }
      case Op::kIfElse:
        if (!eval(n.args[1], a)) return false;
        return eval(a != 0 ? n.args[0] : n.args[2], out);
      case Op::kAdd:
      case Op::kSub:
      case Op::kMul:
      case Op::kDiv:
      case Op::kMod:
        if (!eval(n.args[0], a) || !eval(n.args[1], b)) return false;
        switch (n.op) {
          case Op::kAdd:
            out = a + b;
            return true;
          case Op::kSub:
            out = a - b;
            return true;
          case Op::kMul:
            out = a * b;
            return true;
          case Op::kDiv:
            if (b == 0) return false;
            out = a / b;
            return true;
          default: {
            if (b == 0) return false;
            double m = std::fmod(a, b);
            if (m != 0 && ((m < 0) != (b < 0))) m += b;
            out = m;
            return true;
          }
        }
      case Op::kCompare: {
        if (!eval(n.args[0], a)) return false;
        for (size_t k = 0; k < n.cmps.size(); ++k) {
          if (!eval(n.args[k + 1], b)) return false;
          bool r = false;
          switch (n.cmps[k]) {
            case Cmp::kEq:
              r = a == b;
              break;
            case Cmp::kNe:
              r = a != b;
              break;
            case Cmp::kLt:
              r = a < b;
              break;
            case Cmp::kLe:
              r = a <= b;
              break;
            case Cmp::kGt:
              r = a > b;
              break;
            case Cmp::kGe:
              r = a >= b;
              break;
            default:
              return false;
          }
          if (!r) {
            out = 0;
            return true;
          }
          a = b;
        }
        out = 1;
        return true;
      }
      case Op::kCall:
        return call(n, out);
      default:
        return false;
    }
  }

 private:
  bool call(const Node& n, double& out) const {
    double x = 0;
    if (!eval(n.args[0], x)) return false;
    switch (n.fn) {
      case Fn::kAbs:
        out = std::fabs(x);
        return true;
      case Fn::kSqrt:
        if (x < 0) return false;
        out = std::sqrt(x);
        return true;
      case Fn::kIsnan:
        out = std::isnan(x) ? 1 : 0;
        return true;
      case Fn::kIsinf:
        out = std::isinf(x) ? 1 : 0;
        return true;
      case Fn::kFloat:
        out = x;
        return true;
      case Fn::kInt:
        if (std::isnan(x) || std::isinf(x)) return false;
        out = std::trunc(x);
        return true;
      case Fn::kRound: {
        if (n.args.size() == 1) {
          if (std::isnan(x) || std::isinf(x)) return false;
          out = std::nearbyint(x);
          return true;
        }
        double digits = 0;
        if (!eval(n.args[1], digits) || digits != std::trunc(digits)) return false;
        double scale = std::pow(10.0, digits);
        out = (std::isnan(x) || std::isinf(x) || scale == 0 || std::isinf(scale))
                  ? x
                  : std::nearbyint(x * scale) / scale;
        return true;
      }
      case Fn::kMin:
      case Fn::kMax: {
        double best = x;
        for (size_t k = 1; k < n.args.size(); ++k) {
          double c = 0;
          if (!eval(n.args[k], c)) return false;
          if (n.fn == Fn::kMin ? c < best : best < c) best = c;
        }
        out = best;
        return true;
      }
      default:
        return false;
    }
  }

  const detail::ConditionProgram& p_;
  const double* slots_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Condition

Evaluated<Condition> Condition::compile(std::string_view text, std::vector<std::string> names) {
  using E = Evaluated<Condition>;
  for (const auto& n : names) {
    if (!is_valid_signal_name(n)) {
      return E::failure({"the name '" + n +
                             "' cannot be read by a condition: it must be an identifier that is "
                             "not a function, a constant or a Python keyword",
                         0});
    }
  }
  auto prog = std::make_shared<detail::ConditionProgram>();
  prog->text = std::string(text);
  prog->names = std::move(names);
  prog->read.assign(prog->names.size(), false);
  if (text.size() > kMaxConditionLength) {
    return E::failure(
        {at(static_cast<int>(kMaxConditionLength) + 1,
            "a condition is at most " + std::to_string(kMaxConditionLength) + " characters long"),
         static_cast<int>(kMaxConditionLength) + 1});
  }
  LexResult lex = tokenize(text);
  if (lex.error) return E::failure(*lex.error);
  // A refused token that never reaches the parser's refusal paths still needs its reason; the
  // parser reports every kRefused it meets with refusal_reason().
  try {
    Parser parser(std::move(lex.tokens), *prog);
    prog->root = parser.parse();
    prog->numeric_only = std::all_of(prog->nodes.begin(), prog->nodes.end(), is_numeric_node);
  } catch (const ParseFailure& f) {
    return E::failure(f.error);
  }
  return Condition(std::move(prog));
}

Evaluated<Value> Condition::evaluate(std::span<const Value> slots) const {
  if (slots.size() != p_->names.size()) {
    return Evaluated<Value>::failure({"expected " + std::to_string(p_->names.size()) +
                                          " variables, got " + std::to_string(slots.size()),
                                      0});
  }
  return Evaluator(*p_, slots, nullptr).eval(p_->root);
}

Evaluated<Value> Condition::evaluate(const Variables& vars) const {
  std::vector<Value> slots(p_->names.size());
  std::vector<bool> present(p_->names.size(), false);
  for (size_t i = 0; i < p_->names.size(); ++i) {
    auto it = vars.find(p_->names[i]);
    if (it != vars.end()) {
      slots[i] = it->second;
      present[i] = true;
    }
  }
  return Evaluator(*p_, slots, &present).eval(p_->root);
}

Evaluated<bool> Condition::holds(const Variables& vars) const {
  constexpr size_t kFastSlots = 16;
  if (p_->numeric_only && p_->names.size() <= kFastSlots) {
    std::array<double, kFastSlots> numbers{};
    bool all_numeric = true;
    for (size_t i = 0; i < p_->names.size() && all_numeric; ++i) {
      auto it = vars.find(p_->names[i]);
      all_numeric = it != vars.end() && numeric(it->second);
      if (all_numeric) numbers[i] = num(it->second);
    }
    double out = 0;
    if (all_numeric && NumericEvaluator(*p_, numbers.data()).eval(p_->root, out)) {
      return out != 0;
    }
  }
  auto r = evaluate(vars);
  if (!r) return Evaluated<bool>::failure(r.error());
  return r->truthy();
}

Evaluated<bool> Condition::holds(std::span<const Value> slots) const {
  constexpr size_t kFastSlots = 16;
  if (p_->numeric_only && slots.size() == p_->names.size() && slots.size() <= kFastSlots) {
    std::array<double, kFastSlots> numbers{};
    bool all_numeric = true;
    for (size_t i = 0; i < slots.size() && all_numeric; ++i) {
      all_numeric = numeric(slots[i]);
      if (all_numeric) numbers[i] = num(slots[i]);
    }
    double out = 0;
    if (all_numeric && NumericEvaluator(*p_, numbers.data()).eval(p_->root, out)) {
      return out != 0;
    }
  }
  auto r = evaluate(slots);
  if (!r) return Evaluated<bool>::failure(r.error());
  return r->truthy();
}

const std::string& Condition::text() const { return p_->text; }
const std::vector<std::string>& Condition::names() const { return p_->names; }
std::vector<std::string> Condition::names_read() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < p_->names.size(); ++i) {
    if (p_->read[i]) out.push_back(p_->names[i]);
  }
  return out;
}

const std::vector<std::string>& condition_functions() {
  static const std::vector<std::string> kAll = {"abs", "min",   "max", "round", "sqrt",
                                                "len", "float", "int", "isnan", "isinf"};
  return kAll;
}

const std::vector<std::string>& condition_constants() {
  static const std::vector<std::string> kAll = {"pi", "inf", "nan", "True", "False", "None"};
  return kAll;
}

bool is_valid_signal_name(std::string_view name) {
  if (name.empty() || !ident_start(name[0])) return false;
  for (char c : name) {
    if (!ident_char(c)) return false;
  }
  return !is_function(name) && !is_constant(name) && !is_keyword(name);
}

}  // namespace fieldproof::scenario
