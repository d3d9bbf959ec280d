// Reads doubles as 16 hex digits of their IEEE bits (one per line) and prints, tab-separated, the bits and the
// document {"v": <double>} as the bundled MongoDB Java driver's JsonWriter writes it in RELAXED and in STRICT
// mode. Used by compat/debezium/doubles.py.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

public final class DriverDoubles {
    public static void main(String[] args) throws Exception {
        JsonWriterSettings relaxed = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();
        JsonWriterSettings strict = JsonWriterSettings.builder().outputMode(JsonMode.STRICT).build();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String bits = line.trim();
            if (bits.isEmpty()) {
                continue;
            }
            BsonDocument doc = new BsonDocument("v", new BsonDouble(Double.longBitsToDouble(Long.parseUnsignedLong(bits, 16))));
            System.out.println(bits + "\t" + doc.toJson(relaxed) + "\t" + doc.toJson(strict));
        }
    }
}
