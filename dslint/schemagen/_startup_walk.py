"""The validation path of an argument class, read with ``ast`` as straight-line steps.

A consumer validates its arguments in ``__post_init__`` and the methods it calls. This module
walks that code in execution order (methods of the class and its bases inlined, ``super()``
followed) and writes it as a list of steps a small evaluator can replay on a launch's values:

- ``["set", guards, target, expr]``: an assignment whose value is written in the condition
  language (``self.eval_steps = self.logging_steps``, a local ``feature = 'packing'``);
- ``["forget", guards, targets]``: an assignment, call or loop whose effect is not written in
  that language; the targets' values are unknown afterwards (``"*"``: every value);
- ``["raise", guards, exception, message, file, line]``: a check.

``guards`` are the conditions (source text in the condition language) under which the step
runs; ``"?"`` stands for a condition outside the language. The condition language is Python
syntax restricted to constants, arguments (``self.name``), locals, comparisons, ``and``/``or``/
``not``, ``in``, ``is None``, arithmetic, ``len`` and conditional expressions. Constants are
resolved where the source names them: a module constant, an enum member of a ``str`` enum
(``IntervalStrategy.STEPS`` is ``"steps"``), a local assigned once. A check whose guards are
not all in the language is counted as left out, with the reason (``LeftOut``), never guessed.
"""

from __future__ import annotations

import ast
from dslint.schemagen._startup_lang import (_READS_ONLY, ALL, SOFT, UNKNOWN_GUARD, Code, Method, NotExpressible, Walk, _called_name,
                                            _constant_value, _expression, _Frame, _guard, _is_self, _message, _name_of,
                                            _reads_enum, _try_expression)

def walk_entry(code: Code, entry: Method, cls: str) -> Walk:
    walk = Walk()
    _inline(code, walk, entry, cls, [], {})
    return walk


def walk_function(code: Code, entry: Method, selves: tuple[str, ...]) -> Walk:
    """A function entry (LLaMA-Factory's ``get_train_args``): its locals ``selves`` hold the argument
    objects HfArgumentParser fills from one flat namespace, so ``training_args.x`` and
    ``model_args.x`` are both the argument ``x``. Where the function assigns all of them from
    ``code.parse_call``, the parsed classes' ``__post_init__`` run, in the parser's order."""
    walk = Walk()
    _inline(code, walk, entry, "", [], {}, selves=set(selves))
    return walk


def _inline(code: Code, walk: Walk, method: Method, cls: str, guards: list[str], bound: dict[str, str | None],
            selves: set[str] | None = None) -> None:
    key = (method.owner, method.node.name)
    if key in walk._stack or len(walk._stack) > 12:
        walk.steps.append(["forget", guards, [ALL]])
        return
    walk._frames += 1
    frame = _Frame(method, cls, walk._frames)
    params = [a.arg for a in method.node.args.args]
    if selves is not None:  # a module function: the parameters given an argument object are that object
        frame.selves = set(selves)
        params = [""] + [p for p in params if p not in selves]
    elif static(method):
        frame.selves = set()
        params = [""] + params
    elif params:
        frame.selves = {params[0]}
    for name in params[1:]:
        local = _local_name(frame, name)
        value = bound.get(name)
        walk.steps.append(["set", guards, local, value] if value is not None else ["forget", guards, [local]])
    walk._stack.append(key)
    try:
        _block(code, walk, frame, method.node.body, list(guards))
    finally:
        walk._stack.pop()


def static(method: Method) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.node.decorator_list)


def _local_name(frame: _Frame, name: str) -> str:
    renamed = frame.locals.get(name)
    if renamed is None:
        renamed = frame.locals[name] = f"L{frame.number}_{name}"
    return renamed


def _block(code: Code, walk: Walk, frame: _Frame, statements: list[ast.stmt], guards: list[str]) -> str | None:
    """Walk ``statements`` under ``guards``. How every path through them ends: "raise", "return"
    (a return on some path), or None when one goes on after them.

    After ``if <condition>: raise ...`` the code goes on under a soft guard (:func:`_after`):
    either that check refuses the launch or the code after it runs, so a later check that holds
    is a refusal either way (only its message may be the other's)."""
    for statement in statements:
        if isinstance(statement, ast.If):
            _calls(code, walk, frame, statement.test, guards)
            positive = _guard(code, frame, statement.test)
            negative = _negated(positive)
            ends_body = _block(code, walk, frame, statement.body, guards + [positive])
            ends_else = _block(code, walk, frame, statement.orelse, guards + [negative])
            if ends_body and ends_else:
                return "return" if "return" in (ends_body, ends_else) else "raise"
            if ends_body:
                guards = guards + _after(ends_body, negative)
            elif ends_else:
                guards = guards + _after(ends_else, positive)
        elif isinstance(statement, ast.Raise):
            _raise(code, walk, frame, statement, guards)
            return "raise"
        elif isinstance(statement, ast.Assert):
            _calls(code, walk, frame, statement.test, guards)
            condition = _negated(_guard(code, frame, statement.test))
            _check(code, walk, frame, guards + [condition], "AssertionError", statement.msg, statement)
        elif isinstance(statement, ast.Return):
            if statement.value is not None:
                _calls(code, walk, frame, statement.value, guards)
            return "return"
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            _assign(code, walk, frame, statement, guards)
        elif isinstance(statement, ast.Expr):
            _calls(code, walk, frame, statement.value, guards)
        elif isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
            _loop(code, walk, frame, statement, guards)
        elif isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
            _opaque(code, walk, frame, statement, guards, "inside a try block")
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                _calls(code, walk, frame, item.context_expr, guards)
            ended = _block(code, walk, frame, statement.body, guards)
            if ended:
                return ended
        elif isinstance(statement, ast.Delete):
            walk.steps.append(["forget", guards, _targets(frame, statement.targets)])
        elif isinstance(statement, ast.Match):
            _opaque(code, walk, frame, statement, guards, "inside a match statement")
        # pass, global, nonlocal, a nested def or class, break/continue: no effect on the arguments
    return None


# ---- statements ---------------------------------------------------------------------------------


def _raise(code: Code, walk: Walk, frame: _Frame, statement: ast.Raise, guards: list[str]) -> None:
    exc = statement.exc
    if exc is None:  # a bare re-raise: only inside a handler, which the walker never enters
        return
    name = _called_name(exc.func if isinstance(exc, ast.Call) else exc)
    message = exc.args[0] if isinstance(exc, ast.Call) and exc.args else None
    if isinstance(exc, ast.Call):
        for argument in exc.args[1:] + [k.value for k in exc.keywords]:
            _calls(code, walk, frame, argument, guards)
    _check(code, walk, frame, guards, name or "Exception", message, statement)


def _check(code: Code, walk: Walk, frame: _Frame, guards: list[str], exception: str, message: ast.expr | None,
           statement: ast.stmt) -> None:
    where = (frame.method.path, statement.lineno)
    unknown = next((g for g in guards if g.startswith(UNKNOWN_GUARD)), None)
    if unknown is not None:
        walk.left_out.append((unknown[1:] or "a condition outside the language", *where))
        return
    walk.steps.append(["raise", guards, exception, _message(code, walk, frame, message), *where])


def _after(ending: str, guard: str) -> list[str]:
    """The guard the code after ``if ...: <ending>`` runs under. After a return, the condition
    itself. After a raise, the condition marked ``~``: where the evaluator cannot tell whether it
    holds, it takes it to hold, since otherwise the launch was refused by that raise anyway; and
    none at all for a condition outside the language, for the same reason."""
    if ending == "return":
        return [guard]
    return [] if is_unknown(guard) else [SOFT + guard]


def is_unknown(guard: str) -> bool:
    return guard.startswith(UNKNOWN_GUARD)


def _negated(guard: str) -> str:
    return guard if is_unknown(guard) else f"not ({guard.lstrip(SOFT)})"


def _assign(code: Code, walk: Walk, frame: _Frame, statement, guards: list[str]) -> None:
    value = statement.value
    if value is not None:
        _calls(code, walk, frame, value, guards)
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    if isinstance(statement, ast.AnnAssign) and value is None:
        return
    if code.parsed and len(targets) == 1 and _assigns_the_selves(frame, targets[0]):
        _parse(code, walk, frame, value, guards)
        return
    if len(targets) == 1 and isinstance(statement, (ast.Assign, ast.AnnAssign)):
        target = _single_target(frame, targets[0])
        if target is not None:
            if _preserves(code, frame, target, value):
                walk._enums.add(target)
                return
            try:
                expression = _expression(code, frame, value)
                walk.steps.append(["set", guards, target, expression])
                if _reads_enum(walk, expression):
                    walk._enums.add(target)
            except NotExpressible:
                walk.steps.append(["forget", guards, [target]])
            if isinstance(targets[0], ast.Name) and _is_self(frame, value):
                frame.selves.add(targets[0].id)  # ``args = self``: an alias
            return
    if isinstance(statement, ast.AugAssign):
        target = _single_target(frame, statement.target)
        if target is not None:
            try:
                expr = _expression(code, frame, ast.BinOp(statement.target, statement.op, value))
                walk.steps.append(["set", guards, target, expr])
            except NotExpressible:
                walk.steps.append(["forget", guards, [target]])
            return
    walk.steps.append(["forget", guards, _targets(frame, targets)])


def _assigns_the_selves(frame: _Frame, target: ast.expr) -> bool:
    """``model_args, data_args, training_args, ... = <call>``: every argument object at once."""
    return isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts) \
        and {e.id for e in target.elts} == frame.selves


def _parse(code: Code, walk: Walk, frame: _Frame, value: ast.expr | None, guards: list[str]) -> None:
    """The argument objects made anew: by the entry's parse call, each parsed class's
    ``__post_init__`` runs (HfArgumentParser builds the dataclasses in its order); by any other
    call, dslint does not know what they hold."""
    if not (isinstance(value, ast.Call) and _called_name(value.func) == code.parse_call):
        walk.steps.append(["forget", guards, [ALL]])
        return
    for class_code, start, cls in code.parsed:
        if start is None:
            continue
        if isinstance(start, str):  # a class of another package: its own __post_init__
            _external(class_code, walk, start, guards)
        else:
            _inline(class_code, walk, start, cls, list(guards), {})


def _external(code: Code, walk: Walk, method: str, guards: list[str]) -> None:
    """A base class's ``__post_init__`` from another package: its effects as that package's
    releases have them (forget steps), else every name it may set forgotten."""
    package = method.partition(":")[2]
    steps = code.external_steps(package)
    if steps is not None:
        walk.steps.extend([step[0], guards + step[1], *step[2:]] for step in steps)
        return
    names = code.external_names(package)
    walk.steps.append(["forget", guards, [f"self.{n}" for n in names] if names else [ALL]])


def _preserves(code: Code, frame: _Frame, target: str, value: ast.expr | None) -> bool:
    """``self.x = SomeStrEnum(self.x)``: the value compares equal to what it was."""
    if not (isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords and isinstance(value.func, ast.Name)):
        return False
    try:
        same = _expression(code, frame, value.args[0]) == target
    except NotExpressible:
        return False
    return same and code.enum_member(frame.method.path, value.func.id, None) is True


def _single_target(frame: _Frame, target: ast.expr) -> str | None:
    if isinstance(target, ast.Attribute) and _is_self(frame, target.value):
        return f"self.{target.attr}"
    if isinstance(target, ast.Name) and target.id not in frame.selves:
        return _local_name(frame, target.id)
    return None


def _targets(frame: _Frame, targets) -> list[str]:
    """What assigning to these targets may change: arguments, locals, or everything."""
    out: list[str] = []
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            out += _targets(frame, target.elts)
        elif isinstance(target, ast.Starred):
            out += _targets(frame, [target.value])
        elif isinstance(target, ast.Name):
            out.append(ALL if target.id in frame.selves else _local_name(frame, target.id))
        else:
            root = _root_of(frame, target)
            out.append(root if root is not None else ALL)
    return out


def _root_of(frame: _Frame, node: ast.expr) -> str | None:
    """``self.x`` for ``self.x[k]``/``self.x.y``; a local for ``local[k]``; None when unknown."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute) and _is_self(frame, node.value):
            return f"self.{node.attr}"
        node = node.value
    if isinstance(node, ast.Name):
        return ALL if node.id in frame.selves else _local_name(frame, node.id)
    return None


def _loop(code: Code, walk: Walk, frame: _Frame, statement, guards: list[str]) -> None:
    """A loop over constants (``for name in self._VALID_DICT_FIELDS``, ``for old, new in (...)``)
    is unrolled: its body is walked once per item with the loop variables bound to it. Any
    other loop's effects are forgotten and its checks left out; ``setattr(self, name, ...)`` in
    it forgets just the names it may set when those are constant."""
    items = _constant_items(code, frame, statement)
    if items is not None and _unrollable(statement, items):
        _calls(code, walk, frame, statement.iter, guards)
        for item in items:
            frame.constants.update(_bind(statement.target, item))
            _block(code, walk, frame, statement.body, list(guards))
        for name in _bind(statement.target, items[0]):
            frame.constants.pop(name, None)
        return
    names = _flat_strings(items)
    inner = Walk(_frames=walk._frames, _stack=walk._stack, _enums=walk._enums)
    mark = getattr(statement, "target", None)
    if mark is not None:
        _targets(frame, [mark])  # the loop variables are locals of the frame, whatever they hold
    _block(code, inner, frame, statement.body + statement.orelse, list(guards))
    walk._frames = inner._frames
    forgotten: set[str] = set()
    for step in inner.steps:
        if step[0] == "set":
            forgotten.add(step[2])
        elif step[0] == "forget":
            forgotten.update(step[2])
        elif step[0] == "raise":
            walk.left_out.append(("inside a loop", step[4], step[5]))
    walk.left_out += inner.left_out
    if ALL in forgotten and names is not None and _sets_by_name_only(statement, mark):
        forgotten = (forgotten - {ALL}) | {f"self.{n}" for n in names}
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        forgotten.update(_targets(frame, [statement.target]))
    if isinstance(statement, (ast.For, ast.AsyncFor)) or isinstance(statement, ast.While):
        _calls(code, walk, frame, statement.iter if hasattr(statement, "iter") else statement.test, guards)
    if forgotten:
        walk.steps.append(["forget", guards, sorted(forgotten)])


def _constant_items(code: Code, frame: _Frame, statement) -> list | None:
    """The items of a ``for`` loop over a constant list or tuple (a class attribute too), else None."""
    if not isinstance(statement, ast.For):
        return None
    iterable = statement.iter
    if isinstance(iterable, ast.Attribute) and _is_self(frame, iterable.value):
        values = code.class_constant(iterable.attr)
        if isinstance(values, NotExpressible):
            return None
    else:
        try:
            values = _constant_value(code, frame, iterable)
        except NotExpressible:
            return None
    return list(values) if isinstance(values, (list, tuple)) and values else None


def _flat_strings(items: list | None) -> list[str] | None:
    flat: list = []
    for value in items or [None]:
        flat += list(value) if isinstance(value, (list, tuple)) else [value]
    return flat if flat and all(isinstance(v, str) for v in flat) else None


def _unrollable(statement: ast.For, items: list) -> bool:
    if statement.orelse or len(items) > 64:
        return False
    if any(isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom)) for n in ast.walk(statement)):
        return False
    target = statement.target
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts) and all(
        isinstance(i, (list, tuple)) and len(i) == len(target.elts) for i in items)


def _bind(target: ast.expr, item) -> dict:
    if isinstance(target, ast.Name):
        return {target.id: item}
    return {e.id: v for e, v in zip(target.elts, item)}


def _sets_by_name_only(statement, mark: ast.expr) -> bool:
    """Every ``setattr(self, ...)`` in the loop uses a loop variable as the name."""
    loop_names = {n.id for n in ast.walk(mark) if isinstance(n, ast.Name)}
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and _called_name(node.func) == "setattr" and len(node.args) >= 2:
            if not (isinstance(node.args[1], ast.Name) and node.args[1].id in loop_names):
                return False
    return True


def _opaque(code: Code, walk: Walk, frame: _Frame, statement, guards: list[str], reason: str) -> None:
    inner = Walk(_frames=walk._frames, _stack=walk._stack, _enums=walk._enums)
    bodies = []
    for name in ("body", "orelse", "finalbody"):
        bodies += getattr(statement, name, []) or []
    for handler in getattr(statement, "handlers", []):
        bodies += handler.body
    for case in getattr(statement, "cases", []):
        bodies += case.body
    _block(code, inner, frame, bodies, list(guards))
    walk._frames = inner._frames
    forgotten: set[str] = set()
    for step in inner.steps:
        if step[0] in ("set", "forget"):
            forgotten.update([step[2]] if step[0] == "set" else step[2])
        else:
            walk.left_out.append((reason, step[4], step[5]))
    walk.left_out += inner.left_out
    if forgotten:
        walk.steps.append(["forget", guards, sorted(forgotten)])


# ---- calls: inlined methods, and what other calls may change -------------------------------------


def _calls(code: Code, walk: Walk, frame: _Frame, expression: ast.expr, guards: list[str]) -> None:
    """The effects of the calls in an expression, in evaluation order (inner calls first)."""
    calls = [node for node in ast.walk(expression) if isinstance(node, ast.Call)]
    for call in reversed(calls):
        _call(code, walk, frame, call, guards)


def _call(code: Code, walk: Walk, frame: _Frame, call: ast.Call, guards: list[str]) -> None:
    func = call.func
    target = _method_target(code, frame, call)
    if target is not None:
        method, cls, first_is_self = target
        if isinstance(method, str):  # a base class from another package
            _external(code, walk, method, guards)
            return
        args = call.args if first_is_self else [ast.Name("self")] + list(call.args)
        bound: dict[str, str | None] = {}
        params = [a.arg for a in method.node.args.args]
        if static(method):
            params = [""] + params
        for name, value in zip(params[1:], args[1:]):
            bound[name] = _try_expression(code, frame, value)
        for keyword in call.keywords:
            if keyword.arg is not None:
                bound[keyword.arg] = _try_expression(code, frame, keyword.value)
        _inline(code, walk, method, cls, guards, bound)
        return
    name = _called_name(func)
    if isinstance(func, ast.Name) and func.id not in frame.locals and _function_call(code, walk, frame, call, guards):
        return
    if name == "setattr" and len(call.args) >= 2 and _is_self(frame, call.args[0]):
        attribute = _name_of(frame, call.args[1])
        if isinstance(attribute, str):
            value = _try_expression(code, frame, call.args[2]) if len(call.args) > 2 else None
            target = f"self.{attribute}"
            walk.steps.append(["set", guards, target, value] if value is not None else ["forget", guards, [target]])
        else:
            walk.steps.append(["forget", guards, [ALL]])
        return
    if isinstance(func, ast.Attribute):
        root = _root_of(frame, func.value)
        if root is not None and root != ALL and _mutates(func.attr):
            walk.steps.append(["forget", guards, [root]])
        elif root == ALL and _is_self(frame, func.value):  # an unresolved method of self
            walk.steps.append(["forget", guards, [ALL]])
    if name not in _READS_ONLY and any(_is_self(frame, a) for a in list(call.args) + [k.value for k in call.keywords]):
        walk.steps.append(["forget", guards, [ALL]])


def _function_call(code: Code, walk: Walk, frame: _Frame, call: ast.Call, guards: list[str]) -> bool:
    """A module function of the wheel given argument objects (``_verify_model_args(model_args,
    data_args, finetuning_args)``): inlined, its parameters given an object being that object."""
    if not any(_is_self(frame, a) for a in list(call.args) + [k.value for k in call.keywords]):
        return False
    callee = code.function(frame.method.path, call.func.id)
    if callee is None or callee.node.args.vararg or callee.node.args.kwarg:
        return False
    params = [a.arg for a in callee.node.args.args]
    selves, bound = set(), {}
    for name, value in list(zip(params, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg]:
        if _is_self(frame, value):
            selves.add(name)
        else:
            bound[name] = _try_expression(code, frame, value)
    _inline(code, walk, callee, frame.cls, guards, bound, selves=selves)
    return True


def _mutates(method: str) -> bool:
    """A method of a value that may change it (``self.x.append(...)``); reading ones do not."""
    return method not in {"get", "keys", "values", "items", "copy", "startswith", "endswith", "lower", "upper",
                          "strip", "split", "format", "join", "index", "count", "replace", "rstrip", "lstrip"}


def _method_target(code: Code, frame: _Frame, call: ast.Call):
    """(Method or "external:pkg", class its super() continues from, whether args[0] is self) for a
    call of a method of the argument object, else None."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    owner = func.value
    if _is_self(frame, owner):  # self.m(...)
        found = code.resolve(None, func.attr, False)
        if found is None:
            return None
        return found, _owner_of(found, frame.cls), False
    if isinstance(owner, ast.Call) and _called_name(owner.func) == "super":  # super().m(...)
        found = code.resolve(frame.method.owner, func.attr, True)
        if found is None:
            return None
        return found, _owner_of(found, frame.cls), False
    if isinstance(owner, ast.Name) and call.args and _is_self(frame, call.args[0]):  # Base.m(self, ...)
        found = code.resolve(owner.id, func.attr, False, frame.method.path)
        if found is None:
            return None
        return found, _owner_of(found, owner.id), True
    return None


def _owner_of(found, default: str) -> str:
    return found.owner if isinstance(found, Method) else default
