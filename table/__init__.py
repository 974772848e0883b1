"""One game at one table: the pure table machine that joins the engines and
the mental-poker deals over an ordered log of signed bodies
(:mod:`table.machine`), the replay every peer runs and ``nodealer verify``
(:mod:`table.replay`, :mod:`table.verify`), the in-process
:mod:`table.local`, and the session that plays a seat over a p2p node
(:mod:`table.session`). It knows the engine interface, not particular games.
"""
