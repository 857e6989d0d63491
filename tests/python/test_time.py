"""fieldproof.time: exact integer nanoseconds from numbers and decimal text."""

import unittest

from fieldproof.time import (format_time, microseconds, milliseconds, nanoseconds, parse_duration,
                             seconds)


class Time(unittest.TestCase):
    def test_units(self):
        self.assertEqual(seconds(2), 2_000_000_000)
        self.assertEqual(milliseconds(250), 250_000_000)
        self.assertEqual(microseconds(3), 3_000)
        self.assertEqual(nanoseconds(7), 7)

    def test_decimal_text_and_floats_are_exact(self):
        self.assertEqual(seconds("0.1"), 100_000_000)
        self.assertEqual(seconds(0.1), 100_000_000)
        self.assertEqual(seconds(0.3), 300_000_000)  # 0.1 + 0.2 would not be

    def test_a_fraction_of_a_nanosecond_is_refused(self):
        with self.assertRaises(ValueError):
            seconds("0.0000000001")

    def test_bool_is_not_a_time(self):
        with self.assertRaises(TypeError):
            seconds(True)

    def test_parse_duration(self):
        self.assertEqual(parse_duration("250ms"), milliseconds(250))
        self.assertEqual(parse_duration("10m"), seconds(600))
        self.assertEqual(parse_duration("1.5"), milliseconds(1500))
        with self.assertRaises(ValueError):
            parse_duration("soon")

    def test_format(self):
        self.assertEqual(format_time(1_500_000_000), "1.500000000s")


if __name__ == "__main__":
    unittest.main()
