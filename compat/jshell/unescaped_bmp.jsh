// The BMP characters that the MongoDB Java driver's JSON writer leaves unescaped in a string, as ranges of code
// points in hex ("first-last", one a line), for tests/unit/mongodb/test_extjson.py. What it escapes depends on the
// JDK's Unicode tables (Character.getType), so the JDK's version is part of the result (Java 17: Unicode 13).
// Run by `python -m compat.record java17-unescaped-bmp` (jshell -q --class-path <the bson jar Debezium bundles>).
import org.bson.BsonDocument;
import org.bson.BsonString;
boolean raw(char c) { var s = String.valueOf(c); return new BsonDocument("s", new BsonString(s)).toJson().equals("{\"s\": \"" + s + "\"}"); }
int first = -1;
for (int c = 0; c <= 0x10000; c++) {
    boolean in = c < 0x10000 && raw((char) c);
    if (in && first < 0) first = c;
    if (!in && first >= 0) { System.out.println(Integer.toHexString(first) + "-" + Integer.toHexString(c - 1)); first = -1; }
}
/exit
