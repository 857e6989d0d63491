// The condition language: a small, safe subset of Python expressions that scenarios use in
// topic_value, sequence steps, always / never / eventually, the value collector's count_if and
// the timeline's `when` triggers (docs/assertions.md, "Conditions").
//
// Accepted: literals (numbers, 'strings', "strings", True, False, None, list displays [a, b] and
// tuples (a, b), both read as lists); comparisons == != < <= > >= (chained as in Python:
// 0 < value < 2), in, not in, is, is not; arithmetic + - * / % and unary - and +; and, or, not
// (short-circuit, returning an operand as Python does); the conditional expression a if c else b;
// indexing x[0], x[-1], x["key"]; calls to abs min max round sqrt len float int isnan isinf; the
// constants pi inf nan; and the names the caller allows (`value`, or the signals' names).
// Everything else (attributes, other names, calls to anything else, lambdas, comprehensions,
// assignment, slices, ** and //, bitwise operators, dict and set displays, keyword arguments,
// string prefixes such as f'') is refused by compile() with the 1-based column of the offending
// token. Evaluation never throws: a type mismatch, an index out of range, a division by zero or a
// missing variable is an error value naming the column.
//
//   auto c = Condition::compile("abs(value) < 0.2", {"value"});
//   if (!c) return c.error().message;                       // "column 5: ..."
//   auto r = c->holds({{"value", Value(0.1)}});            // Evaluated<bool>
//   if (r.ok() && *r) ...
//
// Speed: holds() evaluates on plain doubles when the condition is numeric (no strings, lists,
// None, indexing, in, is, len) and every variable is a number or a bool: the same results as the
// general evaluator (a test holds them equal), without copying Values. In hot loops prefer the
// span overloads, which skip the name lookups.
//
// Thread safety: a compiled Condition is immutable; evaluate() and holds() may run concurrently.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace fieldproof::scenario {

// A dynamically typed value: null, bool, number (double), string, list or map (message fields).
// Lists and maps are shared and immutable, so copies are cheap.
class Value {
 public:
  using List = std::vector<Value>;
  using Map = std::map<std::string, Value, std::less<>>;
  enum class Kind { kNull, kBool, kNumber, kString, kList, kMap };

  Value() = default;
  explicit Value(std::nullptr_t) {}
  explicit Value(bool b) : v_(b) {}
  explicit Value(double d) : v_(d) {}
  explicit Value(int i) : v_(static_cast<double>(i)) {}
  explicit Value(long i) : v_(static_cast<double>(i)) {}
  explicit Value(long long i) : v_(static_cast<double>(i)) {}
  explicit Value(std::string s) : v_(std::move(s)) {}
  explicit Value(const char* s) : v_(std::string(s)) {}
  explicit Value(List l) : v_(std::make_shared<const List>(std::move(l))) {}
  explicit Value(Map m) : v_(std::make_shared<const Map>(std::move(m))) {}

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_null() const { return kind() == Kind::kNull; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_number() const { return kind() == Kind::kNumber; }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_list() const { return kind() == Kind::kList; }
  bool is_map() const { return kind() == Kind::kMap; }

  // Accessors: call only after checking the kind.
  bool as_bool() const { return std::get<bool>(v_); }
  double as_number() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const List& as_list() const { return *std::get<std::shared_ptr<const List>>(v_); }
  const Map& as_map() const { return *std::get<std::shared_ptr<const Map>>(v_); }

  // Python truthiness: None, False, 0, nan is truthy (as in Python), "" [] {} are false.
  bool truthy() const;
  // Python's repr-like text: None, True, 1.5, 'text', [1, 2], {'k': 1}.
  std::string repr() const;
  // The kind's name as Python says it: NoneType, bool, float, str, list, dict.
  static const char* kind_name(Kind k);

  // Structural equality as Python's ==: numbers and bools compare numerically (NaN != NaN).
  friend bool operator==(const Value& a, const Value& b);

 private:
  std::variant<std::monostate, bool, double, std::string, std::shared_ptr<const List>,
               std::shared_ptr<const Map>>
      v_;
};

// A compile error: the message and the 1-based column (in the condition's text) of the token.
struct ConditionError {
  std::string message;  // "column 7: attribute access is not allowed ..."
  int column = 0;
};

// The result of an evaluation: a value, or an error (never an exception).
template <typename T>
class Evaluated {
 public:
  Evaluated(T v) : v_(std::move(v)) {}  // NOLINT(google-explicit-constructor)
  static Evaluated failure(ConditionError e) { return Evaluated(std::move(e), 0); }
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const { return std::get<0>(v_); }
  const T& operator*() const { return value(); }
  const T* operator->() const { return &value(); }
  const ConditionError& error() const { return std::get<1>(v_); }

 private:
  Evaluated(ConditionError e, int) : v_(std::move(e)) {}
  std::variant<T, ConditionError> v_;
};

// The variables of an evaluation by name (value, or the signals' names).
using Variables = std::map<std::string, Value, std::less<>>;

namespace detail {
struct ConditionProgram;
}

// A compiled condition. Copyable (shares the immutable program).
class Condition {
 public:
  // Compiles `text`; `names` are the variables it may read. A name of `names` that is one of the
  // functions or constants is refused (a signal cannot shadow them). Errors carry the column.
  static Evaluated<Condition> compile(std::string_view text, std::vector<std::string> names);

  // Evaluates against named variables. A variable the condition reads but `vars` lacks is an
  // error value ("value has no value yet").
  Evaluated<Value> evaluate(const Variables& vars) const;
  // Evaluates with variables given in the order of names() (fastest: no lookups).
  Evaluated<Value> evaluate(std::span<const Value> slots) const;
  // evaluate() followed by Python truthiness.
  Evaluated<bool> holds(const Variables& vars) const;
  Evaluated<bool> holds(std::span<const Value> slots) const;

  const std::string& text() const;
  // The variables the caller allowed, in the order given to compile().
  const std::vector<std::string>& names() const;
  // The subset of names() the condition actually reads.
  std::vector<std::string> names_read() const;

 private:
  explicit Condition(std::shared_ptr<const detail::ConditionProgram> p) : p_(std::move(p)) {}
  std::shared_ptr<const detail::ConditionProgram> p_;
};

// The functions and constants of the language, for documentation and for refusing signal names.
const std::vector<std::string>& condition_functions();
const std::vector<std::string>& condition_constants();
// True when `name` is a valid identifier that is not a function, constant or Python keyword.
bool is_valid_signal_name(std::string_view name);

}  // namespace fieldproof::scenario
