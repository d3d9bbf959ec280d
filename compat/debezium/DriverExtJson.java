// Reads lines "<name>\t<base64 BSON document>" and prints one JSON line per document: the document as Debezium's
// MongoDB connector writes it with the bundled driver's JsonWriter: "strict" (the compact STRICT settings of
// after/before), "relaxed" (the driver's default RELAXED toJson, updateDescription.updatedFields) and "keys" (each
// top-level value as the record key's id: {"_": value} in compact RELAXED, without "{"_": " and "}").
// Used by compat/debezium/extjson_golden.py.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

public final class DriverExtJson {
    private static final JsonWriterSettings COMPACT_STRICT = JsonWriterSettings.builder().outputMode(JsonMode.STRICT)
            .indent(true).indentCharacters("").newLineCharacters("").build();
    private static final JsonWriterSettings COMPACT_RELAXED = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED)
            .indent(true).indentCharacters("").newLineCharacters("").build();
    private static final JsonWriterSettings RELAXED = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();

    private static String quote(String text) {
        return new BsonDocument("s", new BsonString(text)).toJson(RELAXED).replaceFirst("^\\{\"s\": ", "")
                .replaceFirst("}$", "");
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t");
            BsonDocument doc = new RawBsonDocument(Base64.getDecoder().decode(parts[1])).decode(
                    new org.bson.codecs.BsonDocumentCodec());
            List<String> keys = new ArrayList<>();
            for (Map.Entry<String, BsonValue> entry : doc.entrySet()) {
                String wrapped = new BsonDocument("_", entry.getValue()).toJson(COMPACT_RELAXED);
                keys.add(quote(wrapped.substring(6, wrapped.length() - 1)));
            }
            System.out.println("{\"name\": " + quote(parts[0]) + ", \"strict\": " + quote(doc.toJson(COMPACT_STRICT))
                    + ", \"relaxed\": " + quote(doc.toJson(RELAXED)) + ", \"keys\": [" + String.join(", ", keys) + "]}");
        }
    }
}
