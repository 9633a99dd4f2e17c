# CPython 3.11: the version the `hard` task's concurrency check is validated on (it reads the interpreter's frame
# layout; on another version the server refuses `hard` and names the version).
FROM python:3.11-slim

# git: each repository episode's workspace is a one-commit repository; libseccomp2: the sandbox's filter.
RUN apt-get update && apt-get install -y --no-install-recommends git libseccomp2 && rm -rf /var/lib/apt/lists/*

# A non-root user: the layers that hold every run's guarantees (Landlock, seccomp, rlimits) do not need root;
# without user namespaces (Docker's default profile) the tier is landlock+seccomp, and run_bash needs Landlock ABI 6.
RUN useradd --create-home --uid 1000 app
WORKDIR /app

COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt

COPY env ./env
# the sandbox children's own scripts, compiled once here: a child writes no bytecode, and /app is not the app user's
RUN python -m compileall -q -l env/sandbox/inside
COPY tasks ./tasks
# validator.py and inference.py: the image can check itself and run the baseline (docs/deployment.md, "Docker")
COPY openenv.yaml README.md validator.py inference.py ./

USER app
# The test environment repository runs need (pytest, nothing of the server), built now while PyPI is reachable;
# at run time a missing one fails closed instead of being built (ENV_TEST_ENVS_BUILD=off).
RUN python -m env.authoring prepare
ENV HOST=0.0.0.0 PORT=8000 PYTHONUNBUFFERED=1 ENV_TEST_ENVS_BUILD=off
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD python -c "import os, sys, urllib.request; sys.exit(urllib.request.urlopen(f'http://127.0.0.1:{os.environ.get(\"PORT\", \"8000\")}/health', timeout=4).status != 200)"
CMD ["python", "-m", "env.server"]
