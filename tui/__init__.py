"""The terminal interface: the ``nodealer`` command (:mod:`tui.cli`) and the
trio-in-Textual bridge (:mod:`tui.guest`); it talks to the table's session
and p2p's lobby, and holds no game rules."""
