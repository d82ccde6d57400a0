"""The held-out session: a Python inventory API with a TypeScript front end, worded differently
from the development session and never used to choose the capture rules (see
transcript_writer.py)."""

from transcript_writer import Session

CWD = "/Users/omar/work/inventory-api"


def build():
    s = Session("b3e4f5a6-1c2d-4e8f-a7b6-c5d4e3f2a1b0", CWD, "main", "2026-06-18T14:02:11.000", "heldout")
    s.snapshot()
    s.system("Claude Code v2.1.17 started in /Users/omar/work/inventory-api")

    # 1
    s.user("hey! could you check why the /orders endpoint returns 500 when the warehouse field is missing?")
    s.grep("def create_order", f"{CWD}/app/routes/orders.py:41:def create_order(payload: OrderIn, db: Session = Depends(get_db)):")
    s.read(f"{CWD}/app/routes/orders.py", "def create_order(payload: OrderIn, db: Session = Depends(get_db)):\n    wh = WAREHOUSES[payload.warehouse]\n    ...")
    s.say("Found it: `create_order` indexes `WAREHOUSES[payload.warehouse]` directly, so a missing warehouse "
          "raises a KeyError that FastAPI turns into a 500. It should answer 422 with a clear message instead.")

    # 2
    s.user("yep makes sense, please fix it and make it a 422")
    s.edit(f"{CWD}/app/routes/orders.py", "    wh = WAREHOUSES[payload.warehouse]",
           "    wh = WAREHOUSES.get(payload.warehouse)\n    if wh is None:\n        raise HTTPException(422, f\"unknown warehouse {payload.warehouse!r}\")")
    s.bash("pytest -x tests/test_orders.py",
           "============================= test session starts ==============================\ncollected 0 items / 1 error\n\n"
           "==================================== ERRORS ====================================\n"
           "____________________ ERROR collecting tests/test_orders.py _____________________\n"
           "ImportError while importing test module '/Users/omar/work/inventory-api/tests/test_orders.py'.\n"
           "E   ModuleNotFoundError: No module named 'pydantic_settings'\n"
           "=========================== short test summary info ============================\n"
           "ERROR tests/test_orders.py\n!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!!\n"
           "=============================== 1 error in 0.41s ===============================", error=True)
    s.think("The virtualenv lacks pydantic-settings; config.py imports it.")
    s.say("The tests can't even be collected: `app/config.py` imports `pydantic_settings`, which isn't in "
          "requirements.txt nor installed in the venv. I'll add it to requirements.txt and install it.")
    s.edit(f"{CWD}/requirements.txt", "pydantic==2.7.1", "pydantic==2.7.1\npydantic-settings==2.3.4")
    s.bash("pip install -r requirements.txt", "Successfully installed pydantic-settings-2.3.4 python-dotenv-1.0.1")
    s.bash("pytest -x tests/test_orders.py",
           "============================= test session starts ==============================\ncollected 9 items\n\n"
           "tests/test_orders.py .........                                           [100%]\n\n============================== 9 passed in 0.88s ===============================")
    s.say("Done. A missing or unknown warehouse now gets a 422 with the warehouse name in the message, and the "
          "order tests are green again (9 passed) after adding pydantic-settings to requirements.txt.")

    # 3
    s.user("👍")
    s.say("🙂")

    # 4: a decision, worded as a choice
    s.user("For settings we chose pydantic-settings over dynaconf, so please move the remaining os.environ reads in app/ into the Settings class.")
    s.grep("os.environ", f"{CWD}/app/db.py:7:DB_URL = os.environ[\"DB_URL\"]\n{CWD}/app/mail.py:3:SMTP_HOST = os.environ.get(\"SMTP_HOST\", \"localhost\")")
    s.tool("MultiEdit", {"file_path": f"{CWD}/app/config.py", "edits": [
        {"old_string": "class Settings(BaseSettings):", "new_string": "class Settings(BaseSettings):\n    db_url: str\n    smtp_host: str = \"localhost\""}]},
        f"Applied 1 edit to {CWD}/app/config.py")
    s.edit(f"{CWD}/app/db.py", "DB_URL = os.environ[\"DB_URL\"]", "DB_URL = settings.db_url")
    s.edit(f"{CWD}/app/mail.py", "SMTP_HOST = os.environ.get(\"SMTP_HOST\", \"localhost\")", "SMTP_HOST = settings.smtp_host")
    s.bash("pytest -q", "........................................                                 [100%]\n40 passed in 2.31s")
    s.say("All configuration now comes from the `Settings` class in app/config.py: `db.py` and `mail.py` read "
          "`settings.db_url` and `settings.smtp_host` instead of os.environ. Whole suite: 40 passed.")

    # 5: user runs a shell command in bash mode (not a prompt)
    s.user("<bash-input>git log --oneline -3</bash-input>", 3)
    s.user("<bash-stdout>a1b2c3d fix orders 500\n9f8e7d6 add warehouses\n1234567 init</bash-stdout><bash-stderr></bash-stderr>", 1)

    # 6: a secret in the prompt
    s.user("The CI needs to pull our private package. Here is a token you can use: ghp_R2d2C3poBb8Luke5kyw4lker0Leia9HanSo1o "
           "— add it as a repository secret reference in the workflow, never inline.")
    s.read(f"{CWD}/.github/workflows/ci.yml", "jobs:\n  test:\n    runs-on: ubuntu-latest")
    s.edit(f"{CWD}/.github/workflows/ci.yml", "runs-on: ubuntu-latest", "runs-on: ubuntu-latest\n    env:\n      PKG_TOKEN: ${{ secrets.PKG_TOKEN }}")
    s.say("The workflow now reads the token from the `PKG_TOKEN` repository secret (`${{ secrets.PKG_TOKEN }}`); "
          "add the token under Settings → Secrets → Actions with that name. Nothing is inlined in the repo.")

    # 7: a failing command whose output leaks credentials, fixed by re-running after another command
    s.user("run the migration against the local postgres please")
    s.bash("alembic upgrade head",
           "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
           "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) FATAL:  password authentication failed for user \"inventory\"\n"
           "Settings loaded: AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY db_password=hunter2hunter2",
           error=True)
    s.say("Authentication fails because the local `.env` still has the old database password; the compose file "
          "was changed last week. I'll reset the local database container so it picks up the current credentials.")
    s.bash("docker compose down -v && docker compose up -d postgres", " Container inventory-postgres-1  Started")
    s.bash("alembic upgrade head", "INFO  [alembic.runtime.migration] Running upgrade 3c1f -> 4d2e, add soft delete to orders")
    s.say("Migrations applied up to 4d2e (soft delete on orders) after recreating the local postgres container "
          "with the current credentials.")

    # 8: trivial
    s.user("cool thx")
    s.say("Anytime.")

    # 9: a decision stated as a rule
    s.user("Decision: orders are never hard-deleted; deleting an order sets deleted_at and every query filters it out. Make the list endpoint respect that.")
    s.edit(f"{CWD}/app/routes/orders.py", "q = db.query(Order)", "q = db.query(Order).filter(Order.deleted_at.is_(None))")
    s.bash("pytest -q tests/test_orders.py", ".........                                 [100%]\n9 passed in 0.51s")
    s.say("`GET /orders` now filters out soft-deleted orders (`deleted_at IS NULL`); tests still pass.")

    # 10: front end build error and fix
    s.user("Now the frontend: npm run build fails on my machine, can you look?")
    s.bash("cd web && npm run build",
           "> web@0.9.0 build\n> tsc && vite build\n\nsrc/pages/Orders.tsx:58:31 - error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.\n\n"
           "58       setQuantity(event.target.value)\n                                 ~~~~~~~~~~~~~~~~~~\n\nFound 1 error in src/pages/Orders.tsx:58", error=True)
    s.read(f"{CWD}/web/src/pages/Orders.tsx", "const [quantity, setQuantity] = useState<number>(1)\n...\nsetQuantity(event.target.value)")
    s.say("TypeScript rejects `setQuantity(event.target.value)`: input values are strings and the state is a "
          "number. Parsing with `Number(...)` and ignoring NaN fixes it.")
    s.edit(f"{CWD}/web/src/pages/Orders.tsx", "setQuantity(event.target.value)", "setQuantity(Number(event.target.value) || 1)")
    s.bash("cd web && npm run build", "> web@0.9.0 build\n> tsc && vite build\n\nvite v5.2.11 building for production...\n✓ 212 modules transformed.\ndist/index.html  0.46 kB\n✓ built in 3.12s")
    s.say("Fixed: the quantity input is parsed to a number before it reaches state (src/pages/Orders.tsx), and "
          "`npm run build` succeeds.")

    # 11: a one-off failing exploration (noise), then an unrelated success
    s.user("is there a Makefile target for linting?")
    s.bash("cat Makefile", "cat: Makefile: No such file or directory", error=True)
    s.bash("ls", "README.md\napp\nalembic.ini\nrequirements.txt\ntests\nweb\npyproject.toml")
    s.say("There's no Makefile. Linting is configured in pyproject.toml (ruff), so `ruff check .` is the command.")

    # 12
    s.user("ok run ruff then")
    s.bash("ruff check .", "app/routes/orders.py:3:1: F401 [*] `typing.Any` imported but unused\nFound 1 error.\n[*] 1 fixable with the `--fix` option.", error=True)
    s.bash("ruff check . --fix", "Found 1 error (1 fixed, 0 remaining).")
    s.say("Ruff found one unused import (`typing.Any` in app/routes/orders.py) and fixed it; the code is clean.")

    # 13: long pasted log in the prompt
    s.user("Staging logs show this every few minutes, any idea?\n\n" + "\n".join(
        f"2026-06-18 13:{m:02d}:07 WARNING sqlalchemy.pool QueuePool limit of size 5 overflow 10 reached, connection timed out, timeout 30.00"
        for m in range(0, 60, 3)))
    s.say("The pool is exhausted: 5 connections plus 10 overflow are all checked out, so requests wait 30 s and "
          "fail. Either sessions leak (not closed on error paths) or staging gets more concurrency than the pool "
          "allows. The `get_db` dependency closes sessions, but the background report job opens its own and never "
          "closes it on exceptions.")

    # 14
    s.user("Fix the report job leak and bump the pool to 10 + 20 overflow on staging only.")
    s.edit(f"{CWD}/app/jobs/report.py", "db = SessionLocal()", "with SessionLocal() as db:")
    s.edit(f"{CWD}/deploy/staging.env", "DB_POOL_SIZE=5", "DB_POOL_SIZE=10\nDB_MAX_OVERFLOW=20")
    s.bash("pytest -q", "........................................                                 [100%]\n40 passed in 2.40s")
    s.say("The report job now opens its session in a `with` block, so it is closed even when the job fails, and "
          "staging's pool is 10 connections with 20 overflow (deploy/staging.env). Production keeps 5 + 10.")

    # 15: trivial
    s.user("perfect")
    s.say("Great.")

    # 16: a failure that stays unresolved (run twice)
    s.user("last thing, the e2e tests in web/ — run them")
    s.bash("cd web && npx playwright test",
           "Running 12 tests using 2 workers\n  1) [chromium] › orders.spec.ts:14:5 › creates an order\n"
           "    Error: Timed out 5000ms waiting for expect(locator).toBeVisible()\n\n  1 failed\n  11 passed (21.4s)", error=True)
    s.say("One e2e test times out waiting for the confirmation toast after creating an order. Let me run it again "
          "to see whether it is flaky.")
    s.bash("cd web && npx playwright test orders.spec.ts",
           "Running 3 tests using 2 workers\n  1) [chromium] › orders.spec.ts:14:5 › creates an order\n"
           "    Error: Timed out 5000ms waiting for expect(locator).toBeVisible()\n\n  1 failed\n  2 passed (8.1s)", error=True)
    s.say("It fails again the same way, so it is not flaky: the toast never shows. I'm out of time for this "
          "session; the likely cause is the new 422 response path not triggering the toast.")

    # 17
    s.user("ok, we'll look at it tomorrow. summarize what we did today")
    s.say("Today: /orders answers 422 for an unknown warehouse; settings moved to pydantic-settings; CI reads "
          "the package token from a secret; local migrations applied after recreating postgres; orders are "
          "soft-deleted and hidden from the list; the frontend build is fixed; ruff is clean; the report job no "
          "longer leaks sessions and staging's pool is larger. Still open: the orders e2e test (toast never shown).")

    # 18
    s.user("bye")
    s.say("Bye!")
    return s
