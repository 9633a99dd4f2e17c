"""The race family (issue 49): concurrency bugs of ordinary classes over bug patterns and domains, each judged by
controlled interleavings against a sequential model. Built so far: the domains' models (``models``) and the check
that an explored schedule is explained by some sequential order of its calls (``linearize``)."""
