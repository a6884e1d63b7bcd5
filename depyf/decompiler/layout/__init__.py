"""Layout passes: what one compiler's layout of structured code does differently from the one
layout the control flow recovery reads (3.11's), undone on the normalised instructions.

The version modules (``depyf.decompiler.versions``) translate opcodes onto the model; the passes
here then give the model one layout. Each pass undoes one quirk that a ``Features`` flag names
(``depyf.decompiler.instructions.Features``), and a version module runs it only where the features
its ``normalize`` is given (its ``FEATURES`` unless a test says otherwise) have that flag.
Everything after the passes (``cfg``, ``structure/``, ``patterns/``, ``cleanup``) names no CPython
version (``tests/test_version_blind_modules.py``); version knowledge lives in ``versions/`` and
here.

``copies_return_tails`` (a small block that ends the function is copied into each path to it):

- ``copied_tails.chain_operand_copies``: the copies of a chained comparison's last comparison and
  the return after it in the branches of a conditional last operand;
- ``copied_tails.hoist_break_tails``: the code after a ``while True`` loop that only its breaks'
  copies keep, put back after the loop;
- ``break_tails.share_break_tail_copies``: a ``break``'s copy of the returning code after a loop
  that also has an exit (so that code stays after the loop), a jump to that code again;
- ``chain_copies.share_chain_value_copies`` and ``chain_copies.share_duplicated_returns``: the copies
  of a chained comparison's exit and of the ``RETURN_VALUE`` a value-position and/or ends in;
- ``block_stack_tails``: the same for code compiled with a block stack, whose copies also agree in
  handler and stack depth: the exits of try bodies, except clauses and with bodies, a ``break``'s
  copy of the code after its ``for`` loop, both exits of a chained comparison;
  ``block_stack_tails.drop_copied_reraises``: a finally handler's last ``RERAISE`` copied into
  the branch that jumps to it.
  ``block_stack_tails.share_jumped_to_tail_copies``: the code after a conditional expression,
  copied whole (whatever its length) for the branch that jumps past the other, when its first
  instruction has no line of its own.

Which code is a copy of which is decided by one key, ``instructions.copy_key``. Where a jump
finally lands is found by one follower, ``jumps.follow_jumps``, which the structuring uses too.
"""
