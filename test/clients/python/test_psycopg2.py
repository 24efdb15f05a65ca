"""psycopg 2 (Debian python3-psycopg2): parameters are interpolated into the SQL as literals on the
client, so the server sees an integer constant (3 is an int4 literal, the big fingerprint an int8
one) and a Decimal as its digits (Decimal('3') is the integer literal 3, Decimal('3.5') a numeric
one)."""
import decimal
import unittest

import psycopg2

from clientcase import BIG, FORMS, ClientChecks, Driver, named_placeholders


class Psycopg2(Driver):
    error = psycopg2.Error

    def __init__(self):
        self.conn = psycopg2.connect('')
        self.conn.autocommit = True

    def execute(self, sql):
        with self.conn.cursor() as cur:
            cur.execute(sql)

    def fetch(self, sql, params=()):
        with self.conn.cursor() as cur:
            cur.execute(*named_placeholders(sql, params, '%(p{})s'))
            return cur.fetchall()

    def mogrify(self, sql, params):
        with self.conn.cursor() as cur:
            return cur.mogrify(*named_placeholders(sql, params, '%(p{})s')).decode()

    def sqlstate_of(self, e):
        return e.pgcode

    def close(self):
        self.conn.close()


class Psycopg2Test(ClientChecks, unittest.TestCase):
    schema = 'clients_psycopg2'
    make_driver = Psycopg2

    def test_parameters_become_literals(self):
        # (a negative number gets a space before it, so that "-" after "-" is no comment)
        self.assertEqual(self.db.mogrify(FORMS['hamming <= r'][0], (BIG, 3)),
                         'SELECT id FROM docs WHERE hamming(fp,  -7046029254386353131) <= 3 ORDER BY id')
        self.assertEqual(self.db.mogrify('SELECT $1', (decimal.Decimal('3.5'),)), 'SELECT 3.5')

    def test_decimal_radius(self):
        # An integral Decimal is written as an integer literal: the index serves it.
        self.check_query('hamming <= r', BIG, decimal.Decimal('3'))
        # A fractional one is a numeric literal: numeric's comparison, exact, no index.
        for form in ('hamming <= r', 'hamming < r', 'r >= hamming'):
            with self.subTest(form=form):
                self.check_query(form, BIG, decimal.Decimal('3.5'), indexed=False)


if __name__ == '__main__':
    unittest.main()
