"""The predicate language of `isr explore`'s state search: a small, safe expression language over
a state's JSON form (``state_to_json``), parsed here and evaluated by walking its syntax tree.

Why not Python's ``eval``: the query comes from a web page, and the server must run nothing but
comparisons. The grammar (keywords in lower case)::

    query      := expr ((',' | 'and') expr)*        a list of conditions: all must hold
    expr       := conj ('or' conj)*
    conj       := neg ('and' neg)*
    neg        := 'not' neg | compare
    compare    := operand [('==' | '=' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'not in') operand]
    operand    := path | NUMBER | STRING | 'true' | 'false' | 'null' | '[' operands ']'
                | 'len' '(' operand ')' | '(' expr ')'
    path       := NAME ('[' key ']' | '.' NAME)*
    key        := NAME | NUMBER | STRING

``leader_view[r1] == 1 and hw[r0] < 2``, ``coordination.leader = 0, len(log[r1]) = 2``,
``1 in isr_view[r0]``, ``not StrongIsr``. A path names a field of the state (``hw``) and then
keys of maps (``r1``; ``hw[1]`` means ``hw[r1]``) or indexes of lists (``log[r0][0]``). A name
that is not a field but one of the model's invariants is that invariant's verdict in the state.
A path the state lacks (an index past a list's end) is ``null``; an ordering between values of
different types is false. Unknown field names and keys the state never has are refused when the
query is parsed, with the names it has.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from isr.spec.config import did_you_mean

MAX_QUERY = 2_000  # characters: a query is a line typed into a box
MAX_DEPTH = 50  # nesting of parentheses, `not`s, lists and `len`s

_TOKEN = re.compile(
    r"\s*(?:(?P<num>-?\d+)|(?P<str>'[^']*'|\"[^\"]*\")|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>==|!=|<=|>=|[=<>\[\]().,]))"
)
_COMPARE = ("==", "=", "!=", "<", "<=", ">", ">=", "in", "not in")
_KEYWORDS = {"and", "or", "not", "in", "true", "false", "null", "len"}
_MISSING = object()


class QueryError(ValueError):
    """A query that cannot be parsed or names what the state does not have: one line."""


@dataclass(frozen=True)
class _Tok:
    kind: str  # num, str, name, op, end
    text: str
    col: int  # 1-based column, for messages


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            out.append(_Tok("end", "", pos + 1))
            return out
        m = _TOKEN.match(text, pos)
        if m is None:
            raise QueryError(f"at column {pos + 1}: unexpected {text[pos]!r}")
        kind = m.lastgroup or "op"
        out.append(_Tok(kind, m.group(kind), m.start(kind) + 1))
        pos = m.end()


# The syntax tree: nested tuples, (op, ...). Evaluated by ``_eval``.
Node = tuple


class _Parser:
    def __init__(self, text: str, fields: dict[str, Any], invariants: Collection[str]) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.fields = fields  # a sample state's JSON: its field names, the keys of its maps
        self.invariants = set(invariants)
        self.depth = 0
        self.uses_state = False  # some path reads the state's JSON
        self.uses: set[str] = set()  # invariants read

    # -- tokens
    def peek(self) -> _Tok:
        return self.toks[self.i]

    def next(self) -> _Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def at(self, text: str) -> bool:
        t = self.peek()
        return t.kind in ("op", "name") and t.text == text

    def expect(self, text: str) -> None:
        t = self.next()
        if t.text != text or t.kind not in ("op", "name"):
            raise QueryError(f"at column {t.col}: expected {text!r}, got {_show(t)}")

    # -- grammar
    def query(self) -> Node:
        parts = [self.expr()]
        while self.at(",") or self.at("and"):
            self.next()
            parts.append(self.expr())
        t = self.peek()
        if t.kind != "end":
            raise QueryError(
                f"at column {t.col}: expected 'and', 'or', ',' or the end, got {_show(t)}"
            )
        return parts[0] if len(parts) == 1 else ("and", parts)

    def expr(self) -> Node:
        parts = [self.conj()]
        while self.at("or"):
            self.next()
            parts.append(self.conj())
        return parts[0] if len(parts) == 1 else ("or", parts)

    def conj(self) -> Node:
        parts = [self.neg()]
        while self.at("and"):
            self.next()
            parts.append(self.neg())
        return parts[0] if len(parts) == 1 else ("and", parts)

    def neg(self) -> Node:
        if self.at("not"):
            self.next()
            self._deeper()
            node = ("not", self.neg())
            self.depth -= 1
            return node
        return self.compare()

    def compare(self) -> Node:
        left = self.operand()
        op = None
        if self.at("not") and self.toks[self.i + 1].text == "in":
            self.i += 2
            op = "not in"
        elif self.peek().kind in ("op", "name") and self.peek().text in _COMPARE:
            op = self.next().text
        if op is None:
            return ("truth", left)
        right = self.operand()
        return ("cmp", "==" if op == "=" else op, left, right)

    def operand(self) -> Node:
        t = self.next()
        if t.kind == "num":
            return ("lit", int(t.text))
        if t.kind == "str":
            return ("lit", t.text[1:-1])
        if t.kind == "name":
            if t.text == "true":
                return ("lit", True)
            if t.text == "false":
                return ("lit", False)
            if t.text == "null":
                return ("lit", None)
            if t.text == "len":
                self.expect("(")
                self._deeper()
                inner = self.operand()
                self.expect(")")
                self.depth -= 1
                return ("len", inner)
            if t.text in _KEYWORDS:
                raise QueryError(f"at column {t.col}: expected a value, got {_show(t)}")
            return self.path(t)
        if t.kind == "op" and t.text == "(":
            self._deeper()
            inner = self.expr()
            self.expect(")")
            self.depth -= 1
            return inner
        if t.kind == "op" and t.text == "[":
            self._deeper()
            items: list[Node] = []
            if not self.at("]"):
                items.append(self.operand())
                while self.at(","):
                    self.next()
                    items.append(self.operand())
            self.expect("]")
            self.depth -= 1
            return ("list", items)
        raise QueryError(f"at column {t.col}: expected a value, got {_show(t)}")

    def path(self, head: _Tok) -> Node:
        name = head.text
        keys: list[str | int] = []
        while self.at("[") or self.at("."):
            if self.next().text == ".":
                t = self.next()
                if t.kind != "name":
                    raise QueryError(f"at column {t.col}: expected a field name, got {_show(t)}")
                keys.append(t.text)
                continue
            t = self.next()
            if t.kind == "num":
                keys.append(int(t.text))
            elif t.kind in ("name", "str"):
                keys.append(t.text if t.kind == "name" else t.text[1:-1])
            else:
                raise QueryError(f"at column {t.col}: expected a key, got {_show(t)}")
            self.expect("]")
        if name not in self.fields:
            if name in self.invariants and not keys:
                self.uses.add(name)
                return ("inv", name)
            known = [*self.fields, *sorted(self.invariants)]
            raise QueryError(
                f"at column {head.col}: unknown field {name!r}{did_you_mean(name, known)}; "
                f"the state has: {', '.join(self.fields)}"
                + (
                    f"; the invariants: {', '.join(sorted(self.invariants))}"
                    if self.invariants
                    else ""
                )
            )
        self._check_keys(name, keys, head.col)
        self.uses_state = True
        return ("path", name, tuple(keys))

    def _check_keys(self, name: str, keys: list[str | int], col: int) -> None:
        """Refuse a key a map of the sample state lacks (``hw[r7]`` at 3 replicas); lists vary
        in length from state to state, so their indexes are not checked."""
        value = self.fields[name]
        where = name
        for k in keys:
            if isinstance(value, dict):
                got = _lookup(value, k)
                if got is _MISSING:
                    raise QueryError(
                        f"at column {col}: {where} has no key {k!r}; its keys: {', '.join(value)}"
                    )
                value = got
            elif isinstance(value, list):
                return
            else:
                raise QueryError(f"at column {col}: {where} is a {_type(value)}, it has no keys")
            where += f"[{k}]"

    def _deeper(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise QueryError(f"nested more than {MAX_DEPTH} deep")


def _show(t: _Tok) -> str:
    return "the end" if t.kind == "end" else repr(t.text)


def _type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    return "null"


def _lookup(value: Any, key: str | int) -> Any:
    """``value[key]``, or _MISSING. In a map an integer key ``k`` also finds ``"r<k>"`` (the
    per-replica maps), and a string of digits its integer in a list."""
    if isinstance(value, dict):
        if key in value:
            return value[key]
        if isinstance(key, int) and f"r{key}" in value:
            return value[f"r{key}"]
        if isinstance(key, int) and str(key) in value:
            return value[str(key)]
        return _MISSING
    if isinstance(value, list):
        if isinstance(key, str) and key.isdigit():
            key = int(key)
        if isinstance(key, int) and -len(value) <= key < len(value):
            return value[key]
    return _MISSING


@dataclass(frozen=True)
class Query:
    """A parsed query. ``uses_state``: it reads the state's JSON (a query of invariants only
    does not, and a search then skips building it); ``invariants``: the invariants it reads."""

    text: str
    tree: Node
    uses_state: bool
    invariants: frozenset[str]

    def matches(self, state_json: dict[str, Any] | None, invariant: Callable[[str], bool]) -> bool:
        """Whether the state satisfies the query: ``state_json`` its JSON form (None when
        ``uses_state`` is false), ``invariant(name)`` an invariant's verdict in it."""
        return _truth(_eval(self.tree, state_json, invariant))


def parse(text: str, sample: dict[str, Any], invariants: Collection[str] = ()) -> Query:
    """Parse ``text`` against ``sample`` (a state's JSON: the fields and map keys every state
    has) and the names of the model's invariants. Raises QueryError, one line."""
    if not text.strip():
        raise QueryError("the query is empty: give a condition such as hw[r0] == 1")
    if len(text) > MAX_QUERY:
        raise QueryError(f"the query is longer than {MAX_QUERY} characters")
    p = _Parser(text, sample, invariants)
    tree = p.query()
    return Query(text, tree, p.uses_state, frozenset(p.uses))


def _eval(node: Node, s: dict[str, Any] | None, inv: Callable[[str], bool]) -> Any:
    op = node[0]
    if op == "lit":
        return node[1]
    if op == "path":
        value: Any = s[node[1]] if s is not None else None
        for k in node[2]:
            value = _lookup(value, k)
            if value is _MISSING:
                return None
        return value
    if op == "inv":
        return inv(node[1])
    if op == "and":
        return all(_truth(_eval(n, s, inv)) for n in node[1])
    if op == "or":
        return any(_truth(_eval(n, s, inv)) for n in node[1])
    if op == "not":
        return not _truth(_eval(node[1], s, inv))
    if op == "truth":
        return _eval(node[1], s, inv)
    if op == "len":
        v = _eval(node[1], s, inv)
        return len(v) if isinstance(v, list | dict | str) else None
    if op == "list":
        return [_eval(n, s, inv) for n in node[1]]
    if op == "cmp":
        return _compare(node[1], _eval(node[2], s, inv), _eval(node[3], s, inv))
    raise AssertionError(op)


def _truth(v: Any) -> bool:
    """A value as a condition: true, a non-zero number, a non-empty list, map or string."""
    return bool(v)


def _compare(op: str, a: Any, b: Any) -> bool:
    if op == "==":
        return _type(a) == _type(b) and a == b
    if op == "!=":
        return not (_type(a) == _type(b) and a == b)
    if op in ("in", "not in"):
        if isinstance(b, dict):
            found = any(_type(a) == _type(v) and a == v for v in b.values()) or (
                isinstance(a, str) and a in b
            )
        elif isinstance(b, list):
            found = any(_type(a) == _type(v) and a == v for v in b)
        elif isinstance(b, str) and isinstance(a, str):
            found = a in b
        else:
            found = False
        return found if op == "in" else not found
    ta, tb = _type(a), _type(b)
    if ta != tb or ta not in ("number", "string", "list"):
        return False  # an ordering between different types (or with null): false
    try:
        if op == "<":
            return a < b
        if op == "<=":
            return a <= b
        if op == ">":
            return a > b
        return a >= b
    except TypeError:  # lists of different element types
        return False
