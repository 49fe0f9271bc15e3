"""Paper A's chapters as modules: each ``<chapter>.py`` declares the page's parameters once
(``SPEC``, a :class:`~twolayer.page.contract.ChapterSpec`), computes its experiment
(``compute``) and states its checks as functions returning
:class:`~twolayer.page.checks.Claim` objects, which the page records and the tests call on
inputs where the statement is false (``tests/failing_cases``). See ``CONTRIBUTING.md``."""
