"""psycopg 3 (Debian python3-psycopg): parameters bound server-side in text (%t) and binary (%b)
format, and as prepared statements (%s, prepare=True). psycopg 3 binds a Python int as the smallest
integer type that holds it (3 and 1000 as int2, the big fingerprint as int8), a float as float8 and
a Decimal as numeric."""
import decimal
import unittest

import psycopg

from clientcase import (BIG, COMPARISONS, FORMS, ROWS, SMALL, ClientChecks, Driver, expected_ids,
                        named_placeholders)


class Psycopg3(Driver):
    error = psycopg.Error

    def __init__(self, placeholder, binary=False, prepare=None):
        self.conn = psycopg.connect(autocommit=True)
        self.placeholder = '%(p{})' + placeholder
        self.binary = binary
        self.prepare = prepare

    def execute(self, sql):
        self.conn.execute(sql)

    def fetch(self, sql, params=()):
        sql, named = named_placeholders(sql, params, self.placeholder)
        return self.conn.execute(sql, named, prepare=self.prepare, binary=self.binary).fetchall()

    def sqlstate_of(self, e):
        return e.sqlstate

    def close(self):
        self.conn.close()


class Psycopg3Checks(ClientChecks):
    def test_ints_are_bound_as_the_smallest_integer_type(self):
        self.assertEqual(self.db.fetch('SELECT pg_typeof($1)::text, pg_typeof($2)::text, pg_typeof($3)::text',
                                       (3, BIG, SMALL))[0], ('smallint', 'bigint', 'smallint'))

    def test_decimal_radius_is_exact_without_the_index(self):
        # numeric's own comparison (the distance cast to numeric): no index, exact rows.
        for form in COMPARISONS:
            for radius in (decimal.Decimal('3'), decimal.Decimal('3.5')):
                with self.subTest(form=form, radius=radius):
                    self.check_query(form, BIG, radius, indexed=False)
        # hamming_within takes an integer radius: numeric does not cast to it implicitly.
        self.assertEqual(self.db.sqlstate(FORMS['hamming_within'][0], (BIG, decimal.Decimal('3'))), '42883')
        # Cast the radius to reach the index.
        self.check_query('hamming <= r', BIG, decimal.Decimal('3'),
                         sql='SELECT id FROM docs WHERE hamming(fp, $1) <= $2::int ORDER BY id')

    def test_float_radius_uses_the_index(self):
        # A Python float goes as float8, which the extension's comparisons take: indexed, and
        # exact (3.7 selects what 3 does; < 3.0 what < 3 does). NaN is refused.
        self.assertEqual(self.scalar('SELECT pg_typeof($1)::text', (3.5,)), 'double precision')
        for form in COMPARISONS:
            for radius in (3.0, 3.7, 0.0):
                with self.subTest(form=form, radius=radius):
                    self.check_query(form, BIG, radius)
        self.assertEqual(self.db.sqlstate(FORMS['hamming <= r'][0], (BIG, float('nan'))), '22023')

    def test_int_beyond_int8_is_numeric(self):
        sql = 'SELECT count(*) FROM docs WHERE hamming(fp, $1) <= $2'
        self.assertEqual(self.scalar('SELECT pg_typeof($1)::text', (2**70,)), 'numeric')
        self.assertNotIn('docs_fp_idx', self.plan(sql, (BIG, 2**70)))
        self.assertEqual(self.scalar(sql, (BIG, 2**70)), ROWS)


class Psycopg3Text(Psycopg3Checks, unittest.TestCase):
    schema = 'clients_psycopg3_text'
    make_driver = staticmethod(lambda: Psycopg3('t'))


class Psycopg3Binary(Psycopg3Checks, unittest.TestCase):
    schema = 'clients_psycopg3_binary'
    make_driver = staticmethod(lambda: Psycopg3('b', binary=True))


class Psycopg3Prepared(Psycopg3Checks, unittest.TestCase):
    schema = 'clients_psycopg3_prepared'
    make_driver = staticmethod(lambda: Psycopg3('s', prepare=True))

    def test_prepared_statement_parameter_types(self):
        self.db.fetch(FORMS['hamming <= r'][0], (BIG, 3))
        # One prepared statement per query and parameter types (a Decimal radius prepares another).
        types = self.db.fetch('SELECT parameter_types::text[] FROM pg_prepared_statements '
                              'WHERE strpos(statement, $1) > 0', ('hamming(fp, $1) <= $2',))
        self.assertIn((['bigint', 'smallint'],), types)


if __name__ == '__main__':
    unittest.main()
