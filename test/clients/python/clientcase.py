"""The checks every Python driver's test makes (psycopg 3, psycopg 2, asyncpg).

A test module pairs ClientChecks with unittest.TestCase and a Driver that runs SQL the way its
driver does. Statements here are written with $1, $2 placeholders (the driver's adapter rewrites
them) and every parameter is a plain Python value, bound as the driver binds it by default.
The connection comes from the libpq variables PGHOST, PGPORT, PGUSER and PGDATABASE.
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, '..', 'setup.sql'), encoding='utf-8') as f:
    SETUP_SQL = f.read()

BIG = -7046029254386353131   # a query fingerprint that needs int8; row 100000 + d is d bits away
SMALL = 1000                 # one that fits int2; row 200000 + d is d bits away
CLUSTER = {BIG: 100000, SMALL: 200000}
PLANTED = range(13)          # d = 0..12 (setup.sql)
ROWS = 20000 + 2 * len(PLANTED)
INDEX = 'docs_fp_idx'
RADII = (0, 3, 7)

# The README's query forms: the statement, and which planted distance d a radius r selects.
FORMS = {
    'hamming <= r': ('SELECT id FROM docs WHERE hamming(fp, $1) <= $2 ORDER BY id', lambda d, r: d <= r),
    'hamming < r': ('SELECT id FROM docs WHERE hamming(fp, $1) < $2 ORDER BY id', lambda d, r: d < r),
    'r >= hamming': ('SELECT id FROM docs WHERE $2 >= hamming(fp, $1) ORDER BY id', lambda d, r: d <= r),
    'r > hamming': ('SELECT id FROM docs WHERE $2 > hamming(fp, $1) ORDER BY id', lambda d, r: d < r),
    'hamming(q, fp) <= r': ('SELECT id FROM docs WHERE hamming($1, fp) <= $2 ORDER BY id', lambda d, r: d <= r),
    'hamming_within': ('SELECT id FROM docs WHERE hamming_within(fp, $1, $2) ORDER BY id',
                       lambda d, r: d <= r),
}
# The forms that compare a hamming_distance with the radius (hamming_within takes an integer).
COMPARISONS = ('hamming <= r', 'hamming < r', 'r >= hamming', 'r > hamming', 'hamming(q, fp) <= r')

TEXT_A = ('PostgreSQL is a powerful, open source object-relational database system with over 35 '
          'years of active development that has earned it a strong reputation for reliability, '
          'feature robustness, and performance.')
TEXT_B = TEXT_A.replace('strong', 'solid').replace('performance', 'speed')


def expected_ids(form, query_fp, radius):
    selects = FORMS[form][1]
    return [CLUSTER[query_fp] + d for d in PLANTED if selects(d, radius)]


def expected_pairs(radius):
    return [(base + i, base + j, j - i) for base in sorted(CLUSTER.values())
            for i in PLANTED for j in PLANTED if i < j and j - i <= radius]


def named_placeholders(sql, params, placeholder):
    """$n -> the driver's named placeholder (placeholder.format(n)), with the parameters as a dict."""
    return (re.sub(r'\$(\d+)', lambda m: placeholder.format(m.group(1)), sql),
            {f'p{i + 1}': value for i, value in enumerate(params)})


class Driver:
    """One connection, in autocommit mode. Subclasses set `error` (the driver's base exception)
    and implement execute (no parameters, possibly several statements), fetch (rows as tuples),
    sqlstate_of and close."""
    error = Exception

    def sqlstate(self, sql, params=()):
        """The SQLSTATE of the error the statement raises, or None."""
        try:
            self.fetch(sql, params)
        except self.error as e:
            return self.sqlstate_of(e)
        return None


class ClientChecks:
    """Mixed into a unittest.TestCase that sets `schema` and `make_driver`."""
    schema = None
    make_driver = None

    @classmethod
    def setUpClass(cls):
        cls.db = cls.make_driver()
        cls.db.execute(f'DROP SCHEMA IF EXISTS {cls.schema} CASCADE; CREATE SCHEMA {cls.schema}')
        cls.db.execute(f"SELECT set_config('search_path', '{cls.schema}, ' || current_setting('search_path'), false)")
        cls.db.execute(SETUP_SQL)

    @classmethod
    def tearDownClass(cls):
        cls.db.execute(f'DROP SCHEMA {cls.schema} CASCADE')
        cls.db.close()

    def scalar(self, sql, params=()):
        return self.db.fetch(sql, params)[0][0]

    def plan(self, sql, params):
        return '\n'.join(row[0] for row in self.db.fetch('EXPLAIN (COSTS OFF) ' + sql, params))

    def counted(self, sql, params):
        """The statement's rows and how many scans of the simhash index it made (the backend's
        counter for the current transaction, which nothing flushes inside a transaction block)."""
        scans = "SELECT pg_stat_get_xact_numscans('docs_fp_idx'::regclass)"
        self.db.execute('BEGIN')
        try:
            before = self.scalar(scans)
            rows = self.db.fetch(sql, params)
            return rows, self.scalar(scans) - before
        finally:
            self.db.execute('COMMIT')

    def sequential_ids(self, sql, params):
        # A statement text of its own: a driver that prepares the query keeps its cached generic
        # plan whatever enable_* say now.
        self.db.execute('SET enable_indexscan = off; SET enable_bitmapscan = off')
        try:
            rows, scans = self.counted('/* sequential */ ' + sql, params)
        finally:
            self.db.execute('RESET enable_indexscan; RESET enable_bitmapscan')
        self.assertEqual(scans, 0, 'the sequential run scanned the index')
        return [row[0] for row in rows]

    def check_query(self, form, query_fp, radius, indexed=True, expect=None, sql=None):
        """EXPLAIN names the index (or not), the executed statement scans it (or not), and it
        returns the planted rows within the radius (or `expect`), as a sequential scan does."""
        sql = sql or FORMS[form][0]
        params = (query_fp, radius)
        where = f'{sql} with ({query_fp!r}, {radius!r})'
        plan = self.plan(sql, params)
        self.assertEqual(INDEX in plan, indexed, f'{where}:\n{plan}')
        rows, scans = self.counted(sql, params)
        self.assertEqual(scans > 0, indexed, f'{where}: {scans} index scans')
        ids = [row[0] for row in rows]
        self.assertEqual(ids, expected_ids(form, query_fp, radius) if expect is None else expect, where)
        self.assertEqual(ids, self.sequential_ids(sql, params), where + ' vs a sequential scan')

    def test_query_forms_use_the_index(self):
        for form in FORMS:
            for query_fp in CLUSTER:
                for radius in RADII:
                    with self.subTest(form=form, query_fp=query_fp, radius=radius):
                        self.check_query(form, query_fp, radius)

    def test_generic_plans_use_the_index(self):
        """What a statement prepared once and executed again and again may get."""
        self.db.execute('SET plan_cache_mode = force_generic_plan')
        try:
            for form in FORMS:
                for radius in (3, 5, 0, 7, 3, 1, 2):  # past every driver's prepare threshold
                    with self.subTest(form=form, radius=radius):
                        rows, scans = self.counted(FORMS[form][0], (BIG, radius))
                        self.assertGreater(scans, 0)
                        self.assertEqual([row[0] for row in rows], expected_ids(form, BIG, radius))
        finally:
            self.db.execute('RESET plan_cache_mode')

    def test_simhash_round_trip(self):
        fp = self.scalar('SELECT simhash($1)', (TEXT_A,))
        self.assertIsInstance(fp, int)
        self.assertEqual(self.scalar('SELECT hamming($1, simhash($2))', (fp, TEXT_A)), 0)

    def test_minhash_round_trip(self):
        sig_a = self.scalar('SELECT minhash($1)', (TEXT_A,))
        sig_b = self.scalar('SELECT minhash($1)', (TEXT_B,))
        for sig in (sig_a, sig_b):
            self.assertIsInstance(sig, list)
            self.assertEqual(len(sig), 128)
            self.assertTrue(all(isinstance(v, int) and -2**31 <= v < 2**31 for v in sig))
        # Bound back as the driver binds a list of ints: the same signature.
        self.assertIs(self.scalar('SELECT minhash($1) = $2', (TEXT_A, sig_a)), True)
        client = self.scalar('SELECT minhash_jaccard($1, $2)', (sig_a, sig_b))
        server = self.scalar('SELECT minhash_jaccard(minhash($1), minhash($2))', (TEXT_A, TEXT_B))
        self.assertEqual(client, server)
        self.assertEqual(client, sum(a == b for a, b in zip(sig_a, sig_b)) / 128)
        self.assertTrue(0 < client < 1, client)

    def test_simhash_pairs(self):
        rows = self.db.fetch('SELECT id_a, id_b, distance FROM simhash_pairs($1, $2) ORDER BY id_a, id_b',
                             (f'SELECT id, fp FROM {self.schema}.docs', 3))
        self.assertEqual([tuple(row) for row in rows], expected_pairs(3))

    def test_errors_carry_their_sqlstate(self):
        docs = f'SELECT id, fp FROM {self.schema}.docs'
        for sql, params, state in (
                ('SELECT simhash($1, $2)', ('x', 'nope'), '22023'),               # unknown unit
                ('SELECT * FROM simhash_pairs($1, $2)', ('SELECT 1', 3), '42804'),  # not (id, fp)
                ('SELECT * FROM simhash_pairs($1, $2)', (docs, 65), '22023'),       # radius > 64
                ('SELECT minhash_jaccard($1, $2)', ([1, 2], [1, 2, 3]), '22023')):  # other slots
            with self.subTest(sql=sql, params=params):
                self.assertEqual(self.db.sqlstate(sql, params), state)
        self.assertEqual(self.scalar('SELECT 1'), 1)  # the connection goes on
