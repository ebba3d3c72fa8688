/**
 * Loaded first in each test file's process (test/run.ts): under c8, V8 coverage is collected for the
 * test file's own process only, not for the `cordage` commands, workers and servers it starts.
 *
 * Why: every child Node process inherits NODE_V8_COVERAGE from its parent. Measured on the 2-core
 * machine (2026-12-07), a compiled `cordage run` took 0.78 CPU-s plain and 1.05 under coverage, and
 * wrote 2 MB of raw data that c8 then parses; the suite starts hundreds of them. Node reads the
 * variable once at start (the file's own coverage still lands), so removing it here only stops its
 * children from inheriting it. The layers' figures then count what the tests run in process; the
 * kernel's floor (test/coverage/layers.ts) is met in process.
 *
 * CORDAGE_TEST_CHILD_COVERAGE=1 keeps the children's coverage too (a slower, fuller measurement).
 */
if (!process.env.CORDAGE_TEST_CHILD_COVERAGE) delete process.env.NODE_V8_COVERAGE
