"""The model's rules compiled by numba, on states packed into one fixed-width integer key.

The same rules as :mod:`trash_env.exact.model` (which stays the rule book the tests hold this
module to), on a state held as a flat ``int64`` array: the marks of seat 0's slots then seat 1's
(the engine's ``DOWN``/``NATURAL``/``WILD_UP``), then the player to act, the phase, the held
card, the discard top, the counts below the top, a flag for a known stock, the known stock's
counts and the winner. A decision state packs into a ``uint64`` key by a mixed radix with every
field at a fixed place (:func:`trash_env.exact.graph.key_bases`), so two states never share a
key. The marks are the most significant digits, as ``DOWN`` 0, ``WILD_UP`` 1, ``NATURAL`` 2:
a mark only ever rises, so a state's *layout pair* (its marks) only ever moves to a larger
number, and sorted keys list the layout pairs in an order where every move leads forward.
"""

from __future__ import annotations

import numpy as np

from trash_env.numba_cache import njit

DOWN, NATURAL, WILD_UP = 0, 1, 2
DRAW_STOCK, TAKE_DISCARD, DECLINE = 10, 11, 12
OVER, DRAW, WILD, SWAP, CHANCE_DRAW, CHANCE_PICKUP = 0, 1, 2, 3, 5, 6
PLAY, END_TURN, BEGIN_TURN = 0, 1, 2
STACK = 512  # chance nodes pending in one expansion (depth times classes, with room)
OUTCOMES = 256  # distinct successors of one action


def state_length(a: int, b: int, classes: int) -> int:
    return a + b + 7 + 2 * classes


# ---------------------------------------------------------------------------- reading a state


@njit(cache=True)
def _face_down(s, a, b, player):
    lo = 0 if player == 0 else a
    size = a if player == 0 else b
    count = 0
    for i in range(size):
        if s[lo + i] == DOWN:
            count += 1
    return count


@njit(cache=True)
def _unseen(s, a, b, classes, totals, out):
    """Per class the cards nobody has seen (face-down, and the stock before a reshuffle)."""
    n = a + b
    flag = s[n + 4 + classes]
    for c in range(classes):
        out[c] = totals[c] - s[n + 4 + c]
        if flag == 1:
            out[c] -= s[n + 5 + classes + c]
    if s[n + 3] >= 0:
        out[s[n + 3]] -= 1
    if s[n + 2] >= 0:
        out[s[n + 2]] -= 1
    for i in range(n):
        slot = i if i < a else i - a
        if s[i] == NATURAL:
            out[slot + 1] -= 1
        elif s[i] == WILD_UP:
            out[classes - 1] -= 1


@njit(cache=True)
def _stock_size(s, a, b, classes, totals):
    n = a + b
    if s[n + 4 + classes] == 1:
        total = 0
        for c in range(classes):
            total += s[n + 5 + classes + c]
        return total
    pool = np.empty(classes, dtype=np.int64)
    _unseen(s, a, b, classes, totals, pool)
    pending = 1 if s[n + 1] == CHANCE_PICKUP else 0
    return pool.sum() - _face_down(s, a, b, 0) - _face_down(s, a, b, 1) - pending


# ---------------------------------------------------------------------------- the turn


@njit(cache=True)
def _lay(s, a, b, classes, slot, mark):
    """Lay the held card on ``slot`` of the player to act; True when a swapped wild comes back
    to be played (the turn goes on), False when the round ended or a pickup is due."""
    n = a + b
    me = s[n]
    lo = 0 if me == 0 else a
    size = a if me == 0 else b
    was = s[lo + slot]
    s[lo + slot] = mark
    down = 0
    for i in range(size):
        if s[lo + i] == DOWN:
            down += 1
    if down == 0:  # the round is won at once
        s[n + 1] = OVER
        s[n + 2] = -1
        s[n + 3] = -1
        for c in range(2 * classes + 1):
            s[n + 4 + c] = 0
        s[n + 5 + 2 * classes] = me
        s[n + 6 + 2 * classes] = -1
        return False
    if was == DOWN:
        s[n + 1] = CHANCE_PICKUP
        s[n + 2] = -1
        return False
    s[n + 2] = classes - 1  # the swapped wild
    return True


@njit(cache=True)
def _advance(s, a, b, classes, totals, may_swap):
    """Play the held card and go on to the next decision, chance node or the round's end (the
    model's ``_play``, ``_end_turn`` and ``_begin_turn`` as one loop)."""
    n = a + b
    wild = classes - 1
    step = PLAY
    for _ in range(10_000):
        if step == PLAY:
            me = s[n]
            lo = 0 if me == 0 else a
            size = a if me == 0 else b
            card = s[n + 2]
            if card == wild:
                down = _face_down(s, a, b, me)
                if down > 1:
                    s[n + 1] = WILD
                    return
                slot = 0
                while s[lo + slot] != DOWN:
                    slot += 1
                if not _lay(s, a, b, classes, slot, WILD_UP):
                    return
                may_swap = True
                continue
            if 1 <= card <= size:
                mark = s[lo + card - 1]
                if mark == WILD_UP and may_swap:
                    s[n + 1] = SWAP
                    return
                if mark == DOWN:
                    if not _lay(s, a, b, classes, card - 1, NATURAL):
                        return
                    may_swap = True
                    continue
            step = END_TURN
        elif step == END_TURN:
            if s[n + 3] >= 0:
                s[n + 4 + s[n + 3]] += 1
            s[n + 3] = s[n + 2]
            s[n + 2] = -1
            s[n] = 1 - s[n]
            step = BEGIN_TURN
        else:
            size_left = _stock_size(s, a, b, classes, totals)
            below = 0
            for c in range(classes):
                below += s[n + 4 + c]
            if size_left == 0 and below > 0:  # the reshuffle
                s[n + 4 + classes] = 1
                for c in range(classes):
                    s[n + 5 + classes + c] = s[n + 4 + c]
                    s[n + 4 + c] = 0
                s[n + 6 + 2 * classes] = -1  # the pile is its top alone
                size_left = below
            if size_left > 0:
                s[n + 1] = DRAW if s[n + 3] >= 0 else CHANCE_DRAW
                return
            if s[n + 3] < 0:
                raise ValueError("a turn with no stock, no pile and no card to play")
            s[n + 2] = s[n + 3]
            s[n + 3] = -1
            s[n + 6 + 2 * classes] = -1  # the pile was its top alone
            may_swap = True
            step = PLAY
    raise ValueError("a turn that never ends")


@njit(cache=True)
def _legal(s, a, b, out):
    """The legal actions of a decision state into ``out``; their count."""
    n = a + b
    phase = s[n + 1]
    if phase == DRAW:
        out[0] = DRAW_STOCK
        out[1] = TAKE_DISCARD
        return 2
    if phase == SWAP:
        out[0] = s[n + 2] - 1
        out[1] = DECLINE
        return 2
    me = s[n]
    lo = 0 if me == 0 else a
    size = a if me == 0 else b
    count = 0
    for i in range(size):
        if s[lo + i] == DOWN:
            out[count] = i
            count += 1
    return count


@njit(cache=True)
def _apply(s, a, b, classes, totals, action):
    n = a + b
    phase = s[n + 1]
    if phase == DRAW:
        if action == DRAW_STOCK:
            s[n + 4 + s[n + 3]] += 1  # mid-turn the whole pile is "below"
            s[n + 6 + 2 * classes] = s[n + 3]  # the pile's top, mid-turn
            s[n + 3] = -1
            s[n + 1] = CHANCE_DRAW
            return
        s[n + 2] = s[n + 3]
        s[n + 3] = -1
        _advance(s, a, b, classes, totals, True)
    elif phase == WILD:
        if _lay(s, a, b, classes, action, WILD_UP):
            _advance(s, a, b, classes, totals, True)
    elif action == DECLINE:
        _advance(s, a, b, classes, totals, False)
    elif _lay(s, a, b, classes, action, NATURAL):
        _advance(s, a, b, classes, totals, True)


@njit(cache=True)
def _chance_pool(s, a, b, classes, totals, out):
    n = a + b
    if s[n + 1] == CHANCE_DRAW and s[n + 4 + classes] == 1:
        for c in range(classes):
            out[c] = s[n + 5 + classes + c]  # a known stock, drawn uniformly
    else:
        _unseen(s, a, b, classes, totals, out)


@njit(cache=True)
def _apply_chance(s, a, b, classes, totals, cls):
    n = a + b
    if s[n + 1] == CHANCE_DRAW and s[n + 4 + classes] == 1:
        s[n + 5 + classes + cls] -= 1
    s[n + 2] = cls
    s[n + 1] = DRAW
    _advance(s, a, b, classes, totals, True)


@njit(cache=True)
def _fits(s, a, b, classes, cls):
    n = a + b
    me = s[n]
    lo = 0 if me == 0 else a
    size = a if me == 0 else b
    if cls < 0:
        return False
    if cls == classes - 1:
        return _face_down(s, a, b, me) > 0
    return 1 <= cls <= size and s[lo + cls - 1] != NATURAL


@njit(cache=True)
def _greedy(s, a, b, classes):
    """The ``greedy`` bot's move (trash_env.exact.policies.greedy_action)."""
    n = a + b
    phase = s[n + 1]
    if phase == DRAW:
        return TAKE_DISCARD if _fits(s, a, b, classes, s[n + 3]) else DRAW_STOCK
    if phase == SWAP:
        return s[n + 2] - 1
    me = s[n]
    lo = 0 if me == 0 else a
    size = a if me == 0 else b
    for i in range(size - 1, -1, -1):
        if s[lo + i] == DOWN:
            return i
    return -1


@njit(cache=True)
def _counting(s, a, b, classes, totals, discard_weight):
    """The ``counting`` bot's move: greedy's, but the wild goes on the face-down slot whose
    natural card is least likely to come (agents/bots/heuristics.py, ``natural_supply``);
    needs the pile's top mid-turn, which only a key with that field keeps."""
    n = a + b
    if s[n + 1] != WILD:
        return _greedy(s, a, b, classes)
    me = s[n]
    lo = 0 if me == 0 else a
    size = a if me == 0 else b
    other_lo = a if me == 0 else 0
    other_size = b if me == 0 else a
    hidden = np.empty(classes, dtype=np.int64)
    _unseen(s, a, b, classes, totals, hidden)
    known = s[n + 4 + classes] == 1
    pile_top = s[n + 6 + 2 * classes]
    pick = -1
    lowest = np.inf
    for i in range(size):
        if s[lo + i] != DOWN:
            continue
        rank = i + 1
        unseen = hidden[rank] + (s[n + 5 + classes + rank] if known else 0)
        buried = s[n + 4 + rank] - (1 if pile_top == rank else 0)
        rivals = 0
        if rank <= other_size and s[other_lo + rank - 1] != NATURAL:
            rivals = 1
        supply = (unseen + discard_weight * buried) / (1 + rivals)
        if supply <= lowest:  # ties go to the highest slot
            lowest = supply
            pick = i
    return pick


# ---------------------------------------------------------------------------- the key


@njit(cache=True)
def _encode(s, a, b, classes, bases):
    n = a + b
    key = np.uint64(0)
    d = 0
    for i in range(n):
        key = key * bases[d] + np.uint64((3 - s[i]) % 3)  # DOWN 0, WILD_UP 1, NATURAL 2
        d += 1
    phase = s[n + 1]
    fields = (s[n], phase - 1, s[n + 2] + 1, s[n + 3] + 1)
    for value in fields:
        key = key * bases[d] + np.uint64(value)
        d += 1
    for c in range(2 * classes + 1):
        key = key * bases[d] + np.uint64(s[n + 4 + c])
        d += 1
    if d < bases.shape[0]:  # counting's evaluation: the card under the top (pile top mid-turn)
        key = key * bases[d] + np.uint64(s[n + 6 + 2 * classes] + 1)
    return key


@njit(cache=True)
def _decode(key, a, b, classes, bases, s):
    n = a + b
    d = bases.shape[0]
    s[n + 6 + 2 * classes] = -1
    if d > n + 5 + 2 * classes:
        d -= 1
        s[n + 6 + 2 * classes] = np.int64(key % bases[d]) - 1
        key = key // bases[d]
    for c in range(2 * classes, -1, -1):
        d -= 1
        s[n + 4 + c] = np.int64(key % bases[d])
        key = key // bases[d]
    for field in range(3, -1, -1):
        d -= 1
        s[n + field] = np.int64(key % bases[d])
        key = key // bases[d]
    s[n + 1] += 1
    s[n + 2] -= 1
    s[n + 3] -= 1
    for i in range(n - 1, -1, -1):
        d -= 1
        s[i] = (3 - np.int64(key % bases[d])) % 3
        key = key // bases[d]
    s[n + 5 + 2 * classes] = -1


# ---------------------------------------------------------------------------- expansion


@njit(cache=True)
def _expand(start, a, b, classes, totals, bases, stack, stack_p, out_key, out_end, out_p):
    """The distribution of the next decision or terminal states from ``start`` (every chance
    node in between expanded, in the model's order): per outcome its key (decisions) or
    winner (``out_end`` 0 or 1; -1 for a decision), and probability. Returns the count."""
    n = a + b
    pool = np.empty(classes, dtype=np.int64)
    stack[0, :] = start
    stack_p[0] = 1.0
    depth = 1
    count = 0
    while depth > 0:
        depth -= 1
        node = stack[depth].copy()
        p = stack_p[depth]
        phase = node[n + 1]
        if phase == CHANCE_DRAW or phase == CHANCE_PICKUP:
            _chance_pool(node, a, b, classes, totals, pool)
            total = pool.sum()
            for c in range(classes):
                if pool[c] > 0:
                    if depth >= stack.shape[0]:
                        raise ValueError("an expansion deeper than the stack")
                    stack[depth, :] = node
                    _apply_chance(stack[depth], a, b, classes, totals, c)
                    stack_p[depth] = p * (pool[c] / total)
                    depth += 1
            continue
        end = node[n + 5 + 2 * classes] if phase == OVER else -1
        key = _encode(node, a, b, classes, bases) if phase != OVER else np.uint64(0)
        found = -1
        for j in range(count):
            if out_end[j] == end and (end >= 0 or out_key[j] == key):
                found = j
                break
        if found >= 0:
            out_p[found] += p
        else:
            if count >= out_key.shape[0]:
                raise ValueError("more outcomes than room for them")
            out_key[count] = key
            out_end[count] = end
            out_p[count] = p
            count += 1
    return count


@njit(cache=True)
def _expansion_buffers(width):
    """Scratch space for :func:`_expand`: its stack of part-played states with their
    probabilities, and the successors' keys, ends and probabilities."""
    stack = np.empty((STACK, width), dtype=np.int64)
    stack_p = np.empty(STACK)
    keys = np.empty(OUTCOMES, dtype=np.uint64)
    ends = np.empty(OUTCOMES, dtype=np.int64)
    probs = np.empty(OUTCOMES)
    return stack, stack_p, keys, ends, probs


@njit(cache=True)
def deal_outcomes(a, b, classes, totals, bases, first):
    """The first decision states of the deal with seat ``first`` to draw: keys, winners (-1
    for a decision) and probabilities."""
    width = a + b + 7 + 2 * classes
    start = np.zeros(width, dtype=np.int64)
    start[a + b] = first
    start[a + b + 1] = CHANCE_DRAW
    start[a + b + 2] = -1
    start[a + b + 3] = -1
    start[width - 2] = -1
    start[width - 1] = -1
    stack, stack_p, keys, ends, probs = _expansion_buffers(width)
    count = _expand(start, a, b, classes, totals, bases, stack, stack_p, keys, ends, probs)
    return keys[:count].copy(), ends[:count].copy(), probs[:count].copy()


# ---------------------------------------------------------------------------- enumeration

EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True)
def _slot_of(key, mask):
    h = key
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return np.int64(h & mask)


@njit(cache=True)
def _insert(table, key):
    """Add ``key`` to the open-addressing set ``table``; True when it was not there."""
    mask = np.uint64(table.shape[0] - 1)
    i = _slot_of(key, mask)
    while True:
        held = table[i]
        if held == key:
            return False
        if held == EMPTY:
            table[i] = key
            return True
        i = (i + 1) & np.int64(mask)


@njit(cache=True)
def rehash(table, size):
    out = np.full(size, EMPTY, dtype=np.uint64)
    for key in table:
        if key != EMPTY:
            _insert(out, key)
    return out


@njit(cache=True)
def insert_all(table, keys):
    added = 0
    for key in keys:
        if _insert(table, key):
            added += 1
    return added


@njit(cache=True)
def discover(a, b, classes, totals, bases, keys, count, done, table, limit, budget):
    """Breadth-first discovery: expand the states ``keys[done:count]`` (at most ``budget`` of
    them), adding every new decision state to ``table`` and ``keys``; stop early when
    ``count`` passes ``limit`` (the caller grows the arrays). Returns (count, done)."""
    width = a + b + 7 + 2 * classes
    s = np.empty(width, dtype=np.int64)
    child = np.empty(width, dtype=np.int64)
    actions = np.empty(16, dtype=np.int64)
    stack, stack_p, out_key, out_end, out_p = _expansion_buffers(width)
    stop = done + budget
    while done < count and done < stop and count < limit:
        _decode(keys[done], a, b, classes, bases, s)
        done += 1
        for j in range(_legal(s, a, b, actions)):
            child[:] = s
            _apply(child, a, b, classes, totals, actions[j])
            found = _expand(
                child, a, b, classes, totals, bases, stack, stack_p, out_key, out_end, out_p
            )
            for k in range(found):
                if out_end[k] < 0 and _insert(table, out_key[k]):
                    keys[count] = out_key[k]
                    count += 1
    return count, done


# ---------------------------------------------------------------------------- solving

OPTIMAL, GREEDY, RANDOM, COUNTING = 0, 1, 2, 3
TIE = 1e-12


@njit(cache=True)
def _gauss_seidel(lo, hi, player, weights, act_ptr, succ_ptr, succ, prob, values, win, loss, tol):
    """Sweeps over the block ``lo .. hi`` of ``values`` (last state first) until no value
    moves by more than ``tol``: max/min where ``weights`` is empty, else the weighted sum."""
    follow = weights.shape[0] > 0
    sweeps = 0
    while True:
        sweeps += 1
        delta = 0.0
        for i in range(hi - lo - 1, -1, -1):
            mine = player[i] == 0
            best = 0.0 if follow else (-np.inf if mine else np.inf)
            for j in range(act_ptr[i], act_ptr[i + 1]):
                if follow and weights[j] == 0.0:
                    continue
                q = 0.0
                for k in range(succ_ptr[j], succ_ptr[j + 1]):
                    t = succ[k]
                    q += prob[k] * (win if t == -1 else (loss if t == -2 else values[t]))
                if follow:
                    best += weights[j] * q
                elif mine:
                    best = max(best, q)
                else:
                    best = min(best, q)
            change = abs(best - values[lo + i])
            delta = max(delta, change)
            values[lo + i] = best
        if delta < tol or sweeps >= 1_000_000:
            return sweeps


DETERMINED = 1e-9  # the least and greatest solution this close: the state's value is determined


@njit(cache=True)
def _discovered(keys, key):
    """The index of ``key`` in the sorted ``keys`` (every successor was discovered)."""
    t = np.searchsorted(keys, key)
    if t >= keys.shape[0] or keys[t] != key:
        raise ValueError("a successor that was never discovered")
    return t


@njit(cache=True)
def _grown(array, need):
    if need <= array.shape[0]:
        return array
    out = np.empty(max(2 * array.shape[0], need), dtype=array.dtype)
    out[: array.shape[0]] = array
    return out


@njit(cache=True)
def cutoff_limit(a, b, classes, totals, bases, keys, lower, upper, values, tol, check):
    """The optimal ``values``: where the least and the greatest solution meet (``lower``,
    ``upper``), that value, the limit of every cut-off; at the states where they do not (pass
    cycles), the limit of the cut-off recursion itself. Every state those reach is enumerated
    (a closed set: its values at every cut-off are the whole round's) and swept whole (Jacobi)
    from 0, sweep ``T`` being the round cut off after ``T`` decisions, until no value moves by
    ``tol``. A sweep is a turn, as the env's ``max_turns`` counts: the decisions within a
    turn (a wild's slot, a swap) read the same sweep's values, deepest first. Where the
    values settle into alternating with the cut-off's parity instead (sweep T equal to sweep
    T - 2), the value is their mean: the cut-off's parity a fair coin, known to both
    players. ``check`` gets (states left open, states swept, the largest difference between
    the sweeps' limit and a determined value, the sweeps, the largest gap between the bounds
    at a state called determined, the states that alternate, the largest alternation)."""
    open_count = 0
    for i in range(keys.shape[0]):
        gap = upper[i] - lower[i]
        values[i] = lower[i]
        if gap > DETERMINED:
            open_count += 1
        else:
            check[4] = max(check[4], gap)
    check[0] = open_count
    if open_count == 0:
        return
    roots = np.empty(open_count, dtype=np.int64)
    open_count = 0
    for i in range(keys.shape[0]):
        if upper[i] - lower[i] > DETERMINED:
            roots[open_count] = i
            open_count += 1
    mark = np.full(keys.shape[0], -1, dtype=np.int64)
    width = a + b + 7 + 2 * classes
    s = np.empty(width, dtype=np.int64)
    child = np.empty(width, dtype=np.int64)
    acts = np.empty(16, dtype=np.int64)
    stack, stack_p, out_key, out_end, out_p = _expansion_buffers(width)
    order = np.empty(roots.shape[0] + 1024, dtype=np.int64)
    count = 0
    for r in roots:
        mark[r] = count
        order[count] = r
        count += 1
    player = np.empty(order.shape[0], dtype=np.int8)
    midturn = np.empty(order.shape[0], dtype=np.bool_)
    act_ptr = np.zeros(order.shape[0] + 1, dtype=np.int64)
    succ_ptr = np.zeros(16 * order.shape[0] + 1, dtype=np.int64)
    succ = np.empty(64 * order.shape[0], dtype=np.int64)
    prob = np.empty(64 * order.shape[0])
    edges = 0
    done = 0
    while done < count:
        _decode(keys[order[done]], a, b, classes, bases, s)
        player = _grown(player, done + 1)
        midturn = _grown(midturn, done + 1)
        act_ptr = _grown(act_ptr, done + 2)
        player[done] = s[a + b]
        midturn[done] = s[a + b + 1] != DRAW
        base = act_ptr[done]
        n_acts = _legal(s, a, b, acts)
        succ_ptr = _grown(succ_ptr, base + n_acts + 1)
        for j in range(n_acts):
            child[:] = s
            _apply(child, a, b, classes, totals, acts[j])
            found = _expand(
                child, a, b, classes, totals, bases, stack, stack_p, out_key, out_end, out_p
            )
            succ = _grown(succ, edges + found)
            prob = _grown(prob, edges + found)
            for k in range(found):
                if out_end[k] >= 0:
                    succ[edges] = -1 - out_end[k]
                else:
                    t = _discovered(keys, out_key[k])
                    if mark[t] < 0:
                        order = _grown(order, count + 1)
                        mark[t] = count
                        order[count] = t
                        count += 1
                    succ[edges] = mark[t]
                prob[edges] = out_p[k]
                edges += 1
            succ_ptr[base + j + 1] = edges
        act_ptr[done + 1] = base + n_acts
        done += 1
    # Mid-turn states first, deepest first (a lay raises a mark: a later key), then turns.
    mids = np.nonzero(midturn[:count])[0]
    sequence = np.concatenate((mids[np.argsort(-order[mids])], np.nonzero(~midturn[:count])[0]))
    before = np.zeros(count)  # sweep T - 2
    now = np.zeros(count)  # sweep T - 1
    after = np.zeros(count)  # sweep T
    sweeps = 0
    while True:
        sweeps += 1
        delta = 0.0
        alternation = 0.0
        for i in sequence:
            mine = player[i] == 0
            top = -np.inf if mine else np.inf
            for j in range(act_ptr[i], act_ptr[i + 1]):
                q = 0.0
                for k in range(succ_ptr[j], succ_ptr[j + 1]):
                    t = succ[k]
                    if t == -1:
                        q += prob[k]
                    elif t == -2:
                        q -= prob[k]
                    else:
                        q += prob[k] * (after[t] if midturn[t] else now[t])
                top = max(top, q) if mine else min(top, q)
            delta = max(delta, abs(top - now[i]))
            alternation = max(alternation, abs(top - before[i]))
            after[i] = top
        if delta < tol or (sweeps > 2 and alternation < tol):
            break
        if sweeps >= 1_000_000:
            raise ValueError("the cut-off recursion did not settle")
        before[:] = now
        now[:] = after
    for i in range(count):
        swing = abs(after[i] - now[i])
        if swing >= tol:
            check[5] += 1
            check[6] = max(check[6], swing)
        now[i] = (after[i] + now[i]) / 2
    for i in range(count):
        if i < roots.shape[0]:
            values[order[i]] = now[i]
        else:
            check[2] = max(check[2], abs(now[i] - values[order[i]]))
    check[1] = count
    check[3] = sweeps


@njit(cache=True)
def _q(j, succ_ptr, succ, prob, values, win, loss):
    q = 0.0
    for k in range(succ_ptr[j], succ_ptr[j + 1]):
        t = succ[k]
        q += prob[k] * (win if t == -1 else (loss if t == -2 else values[t]))
    return q


@njit(cache=True)
def _block_start(keys, low, hi):
    """The first index of the layout pair that ends at ``hi`` (exclusive)."""
    layout = keys[hi - 1] // low
    lo = hi - 1
    while lo > 0 and keys[lo - 1] // low == layout:
        lo -= 1
    return lo


@njit(cache=True)
def _block_graph(a, b, classes, totals, bases, keys, lo, hi, with_counting):
    """The edges of the layout pair ``keys[lo:hi]``: per state its player, greedy's and
    counting's action index (counting's -1 unless the keys hold the pile's top), the actions
    and their successors (an index into ``keys``, or -1/-2 for seat 0/1 winning) with their
    probabilities."""
    width = a + b + 7 + 2 * classes
    s = np.empty(width, dtype=np.int64)
    child = np.empty(width, dtype=np.int64)
    acts = np.empty(16, dtype=np.int64)
    stack, stack_p, out_key, out_end, out_p = _expansion_buffers(width)
    size = hi - lo
    player = np.empty(size, dtype=np.int8)
    greedy = np.empty(size, dtype=np.int64)
    counting = np.full(size, -1, dtype=np.int64)
    act_ptr = np.zeros(size + 1, dtype=np.int64)
    most = max(a, b) + 2
    action = np.empty(most * size, dtype=np.int64)
    succ_ptr = np.zeros(most * size + 1, dtype=np.int64)
    succ = np.empty(16 * size + 256, dtype=np.int64)
    prob = np.empty(16 * size + 256)
    edges = 0
    for i in range(size):
        _decode(keys[lo + i], a, b, classes, bases, s)
        player[i] = s[a + b]
        wanted = _greedy(s, a, b, classes)
        counted = _counting(s, a, b, classes, totals, 0.5) if with_counting else -1
        count = _legal(s, a, b, acts)
        base = act_ptr[i]
        for j in range(count):
            if acts[j] == wanted:
                greedy[i] = base + j
            if acts[j] == counted:
                counting[i] = base + j
            action[base + j] = acts[j]
            child[:] = s
            _apply(child, a, b, classes, totals, acts[j])
            found = _expand(
                child, a, b, classes, totals, bases, stack, stack_p, out_key, out_end, out_p
            )
            succ = _grown(succ, edges + found)
            prob = _grown(prob, edges + found)
            for k in range(found):
                if out_end[k] >= 0:
                    succ[edges] = -1 - out_end[k]
                else:
                    t = _discovered(keys, out_key[k])
                    succ[edges] = t
                prob[edges] = out_p[k]
                edges += 1
            succ_ptr[base + j + 1] = edges
        act_ptr[i + 1] = base + count
    return player, greedy, counting, act_ptr, action, succ_ptr, succ, prob


@njit(cache=True)
def bound_blocks(a, b, classes, totals, bases, keys, low, hi, budget, lower, upper, tol):
    """The least and the greatest solution of the Bellman equations (the optimal values as
    when a cut-off round pays seat 0 -1, and +1), layout pair by layout pair from ``hi``
    (exclusive) going down until ``budget`` states are done; returns the new ``hi``. Each
    pair's least (greatest) solution, the later pairs' least (greatest) values given, is the
    whole round's there: sweeps from -1 (from 1) reach it, whatever their order."""
    no_weights = np.empty(0)
    done = 0
    while hi > 0 and done < budget:
        lo = _block_start(keys, low, hi)
        player, _, _, act_ptr, _, succ_ptr, succ, prob = _block_graph(
            a, b, classes, totals, bases, keys, lo, hi, False
        )
        for bound, start in ((lower, -1.0), (upper, 1.0)):
            bound[lo:hi] = start
            _gauss_seidel(
                lo, hi, player, no_weights, act_ptr, succ_ptr, succ, prob, bound, 1.0, -1.0, tol
            )
        done += hi - lo
        hi = lo
    return hi


@njit(cache=True)
def solve_blocks(
    a, b, classes, totals, bases, keys, low, hi, budget, values, best, policies, follows, gap, tol
):
    """With the optimal ``values`` (seat 0's) final, the layout pairs ending at ``hi``
    (exclusive) going down, until ``budget`` states are done; returns the new ``hi``.
    ``best`` gets an optimal action per state (ties to greedy's move), ``follows[m]`` the
    value of the policy pair ``policies[m] = (seat 0's, seat 1's, win value, loss value)``
    and ``gap`` accumulates greedy's loss: (states not optimal, value lost there, the
    largest loss)."""
    with_counting = bases.shape[0] > a + b + 5 + 2 * classes
    done = 0
    while hi > 0 and done < budget:
        lo = _block_start(keys, low, hi)
        size = hi - lo
        player, greedy, counting, act_ptr, action, succ_ptr, succ, prob = _block_graph(
            a, b, classes, totals, bases, keys, lo, hi, with_counting
        )
        chosen = np.empty(act_ptr[size], dtype=np.float64)
        optimal_index = np.empty(size, dtype=np.int64)
        for i in range(size):
            sign = 1.0 if player[i] == 0 else -1.0
            top = -np.inf
            for j in range(act_ptr[i], act_ptr[i + 1]):
                chosen[j] = _q(j, succ_ptr, succ, prob, values, 1.0, -1.0)
                top = max(top, sign * chosen[j])
            pick = -1
            for j in range(act_ptr[i], act_ptr[i + 1]):
                if sign * chosen[j] >= top - TIE and (pick < 0 or j == greedy[i]):
                    pick = j
            best[lo + i] = action[pick]
            lost = top - sign * chosen[greedy[i]]
            if lost > TIE:
                gap[0] += 1.0
                gap[1] += lost
            gap[2] = max(gap[2], lost)
            if pick < 0:
                raise ValueError("no optimal action")
            optimal_index[i] = pick
        for m in range(policies.shape[0]):
            weights = np.zeros(act_ptr[size])
            for i in range(size):
                kind = policies[m, 0] if player[i] == 0 else policies[m, 1]
                if kind == OPTIMAL:
                    weights[optimal_index[i]] = 1.0
                elif kind == GREEDY:
                    weights[greedy[i]] = 1.0
                elif kind == COUNTING:
                    if counting[i] < 0:
                        raise ValueError("counting needs the key with the pile's top mid-turn")
                    weights[counting[i]] = 1.0
                else:
                    width_i = act_ptr[i + 1] - act_ptr[i]
                    for j in range(act_ptr[i], act_ptr[i + 1]):
                        weights[j] = 1.0 / width_i
            row = follows[m]
            row[lo:hi] = 0.0
            _gauss_seidel(
                lo,
                hi,
                player,
                weights,
                act_ptr,
                succ_ptr,
                succ,
                prob,
                row,
                policies[m, 2],
                policies[m, 3],
                tol,
            )
        done += size
        hi = lo
    return hi


@njit(cache=True)
def action_outcomes(a, b, classes, totals, bases, key, action):
    """The next decision or terminal states after ``action`` in the state ``key``: keys,
    winners (-1 for a decision) and probabilities (for tests against the model)."""
    width = a + b + 7 + 2 * classes
    s = np.empty(width, dtype=np.int64)
    _decode(key, a, b, classes, bases, s)
    _apply(s, a, b, classes, totals, action)
    stack, stack_p, keys, ends, probs = _expansion_buffers(width)
    count = _expand(s, a, b, classes, totals, bases, stack, stack_p, keys, ends, probs)
    return keys[:count].copy(), ends[:count].copy(), probs[:count].copy()


@njit(cache=True)
def encode(a, b, classes, bases, fields):
    """The key of the state whose flat fields are ``fields`` (for tests of the packing)."""
    return _encode(fields, a, b, classes, bases)


@njit(cache=True)
def counting_action(a, b, classes, totals, fields):
    """``counting``'s move in the state whose flat fields are ``fields`` (for tests)."""
    return _counting(fields, a, b, classes, totals, 0.5)
