// Double.toString and Float.toString of varied values, for tests/unit/connect/test_javalang.py. Needs a JDK 19+
// jshell (JDK 17 prints some values with one digit too many). Run by `python -m compat.record javalang`, which writes
// tests/unit/connect/data/javalang_golden.txt (a header line naming the JDK, then what this prints).
// Each line: D|F, the value's bits in hex, Java's text.
var r = new java.util.Random(20261125L);
void d(long bits) { System.out.println("D " + Long.toHexString(bits) + " " + Double.toString(Double.longBitsToDouble(bits))); }
void dv(double v) { d(Double.doubleToRawLongBits(v)); }
void f(int bits) { System.out.println("F " + Integer.toHexString(bits) + " " + Float.toString(Float.intBitsToFloat(bits))); }
for (int i = 0; i < 600; i++) d(r.nextLong());                                     // any bits: all exponents, NaNs
for (int i = 0; i < 300; i++) d(r.nextLong() & 0xFFFFFFFFFFFFFL);                  // subnormals
for (int i = 1; i <= 100; i++) dv(i * Double.MIN_VALUE);                           // the smallest subnormals
for (int e = -325; e <= 308; e++) dv(Double.parseDouble("1e" + e));                // powers of ten
for (int i = 0; i < 300; i++) dv(Double.parseDouble((1 + r.nextInt(99)) + "e" + (r.nextInt(640) - 330)));  // 1-2 digits
for (int i = 0; i < 100; i++) dv((double) (r.nextInt(2000000) - 1000000));         // whole numbers
for (int i = 0; i < 400; i++) f(r.nextInt());
for (int i = 0; i < 100; i++) f(r.nextInt() & 0x7FFFFF);                           // float subnormals
/exit
