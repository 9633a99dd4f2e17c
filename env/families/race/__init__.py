"""The race family (issue 49): concurrency bugs of ordinary classes over bug patterns and domains, each judged by
controlled interleavings against a sequential model. Built so far: the domains' models (``models``), the check that
an explored schedule is explained by some sequential order of its calls (``linearize``), and the explorer's plans and
verdict for a class of a domain (``exploration``; the explorer's model plans, env/sandbox/inside/explorer.py)."""
