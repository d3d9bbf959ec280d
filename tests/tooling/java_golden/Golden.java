// Runs the real Java classes over a list of cases and prints what they produce (one JSON object per case, in
// order, as a JSON array). Test tooling only: see record.py next to this file for how it is run and why.
//
//   java -cp '<libs>/*' Golden.java cases.json > results.json
//
// Every Connect value crosses the language boundary as JsonConverter's schema+payload envelope text (the
// forward direction of which is golden-tested separately), so a case's input and output are plain strings.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

public class Golden {
    static final ObjectMapper MAPPER = new ObjectMapper();
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    public static void main(String[] args) throws Exception {
        JsonNode cases = MAPPER.readTree(new File(args[0]));
        ArrayNode results = NODES.arrayNode();
        for (JsonNode c : cases) {
            ObjectNode result = NODES.objectNode();
            result.put("name", c.get("name").asText());
            try {
                switch (c.get("kind").asText()) {
                    case "json" -> json(c, result);
                    case "transform" -> transform(c, result);
                    case "predicate" -> predicate(c, result);
                    case "cloudevents" -> cloudEvents(c, result);
                    default -> throw new IllegalArgumentException("unknown kind " + c.get("kind"));
                }
            } catch (Exception e) {
                result.put("error", e.getClass().getName() + ": " + e.getMessage());
            }
            results.add(result);
        }
        System.out.println(MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(results));
    }

    static Map<String, Object> config(JsonNode c) {
        Map<String, Object> out = new HashMap<>();
        JsonNode node = c.get("config");
        if (node != null) {
            node.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        }
        return out;
    }

    static JsonConverter envelopeConverter(boolean isKey) {
        JsonConverter conv = new JsonConverter();
        conv.configure(Map.of("schemas.enable", "true"), isKey);
        return conv;
    }

    static SchemaAndValue read(JsonNode envelope, boolean isKey) {
        if (envelope == null || envelope.isNull()) {
            return SchemaAndValue.NULL;
        }
        return envelopeConverter(isKey).toConnectData("t", envelope.asText().getBytes(StandardCharsets.UTF_8));
    }

    static String write(Schema schema, Object value, boolean isKey) {
        byte[] bytes = envelopeConverter(isKey).fromConnectData("t", schema, value);
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    // --- JsonConverter both ways ---------------------------------------------------------------------------
    static void json(JsonNode c, ObjectNode result) {
        SchemaAndValue input = read(c.get("input"), false);
        JsonConverter conv = new JsonConverter();
        conv.configure(config(c), false);
        byte[] out = conv.fromConnectData("t", input.schema(), input.value());
        result.put("bytes", out == null ? null : new String(out, StandardCharsets.UTF_8));
        SchemaAndValue back = conv.toConnectData("t", out);
        result.set("read", describe(back.schema(), back.value()));
        byte[] again = conv.fromConnectData("t", back.schema(), back.value());
        result.put("again", again == null ? null : new String(again, StandardCharsets.UTF_8));
    }

    static JsonNode describe(Schema schema, Object value) {
        ObjectNode out = NODES.objectNode();
        out.set("schema", schema == null ? NODES.nullNode() : envelopeConverter(false).asJsonSchema(schema));
        out.set("value", describeValue(value));
        return out;
    }

    static JsonNode describeValue(Object value) {
        if (value == null) {
            return NODES.nullNode();
        }
        ObjectNode out = NODES.objectNode();
        if (value instanceof Struct s) {
            ObjectNode fields = NODES.objectNode();
            for (Field f : s.schema().fields()) {
                fields.set(f.name(), describeValue(s.getWithoutDefault(f.name())));
            }
            out.set("struct", fields);
        } else if (value instanceof Map<?, ?> m) {
            ArrayNode entries = NODES.arrayNode();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                entries.add(NODES.arrayNode().add(describeValue(e.getKey())).add(describeValue(e.getValue())));
            }
            out.set("map", entries);
        } else if (value instanceof List<?> l) {
            ArrayNode items = NODES.arrayNode();
            for (Object item : l) {
                items.add(describeValue(item));
            }
            out.set("array", items);
        } else if (value instanceof byte[] b) {
            out.put("bytes", Base64.getEncoder().encodeToString(b));
        } else if (value instanceof ByteBuffer b) {
            byte[] copy = new byte[b.remaining()];
            b.duplicate().get(copy);
            out.put("bytes", Base64.getEncoder().encodeToString(copy));
        } else if (value instanceof BigDecimal d) {
            out.put("decimal", d.toString());
        } else if (value instanceof java.util.Date d) {
            out.put("date_ms", d.getTime());
        } else if (value instanceof Float f) {
            out.put("float", Float.toString(f));
        } else if (value instanceof Double d) {
            out.put("double", Double.toString(d));
        } else if (value instanceof Number n) {
            out.put("int", n.longValue());
        } else if (value instanceof Boolean b) {
            out.put("boolean", b);
        } else {
            out.put("string", value.toString());
        }
        return out;
    }

    // --- records -------------------------------------------------------------------------------------------
    static SourceRecord record(JsonNode r) {
        SchemaAndValue key = read(r.get("key"), true);
        SchemaAndValue value = read(r.get("value"), false);
        ConnectHeaders headers = new ConnectHeaders();
        JsonNode hs = r.get("headers");
        if (hs != null) {
            for (JsonNode h : hs) {
                SchemaAndValue hv = read(h.get(1), false);
                headers.add(h.get(0).asText(), hv.value(), hv.schema());
            }
        }
        Integer partition = r.hasNonNull("partition") ? r.get("partition").asInt() : null;
        Long timestamp = r.hasNonNull("timestamp") ? r.get("timestamp").asLong() : null;
        return new SourceRecord(Map.of("p", 0), Map.of("o", 0), r.get("topic").asText(), partition, key.schema(),
                key.value(), value.schema(), value.value(), timestamp, headers);
    }

    static JsonNode recordJson(SourceRecord rec) {
        if (rec == null) {
            return NODES.nullNode();
        }
        ObjectNode out = NODES.objectNode();
        out.put("topic", rec.topic());
        if (rec.kafkaPartition() == null) {
            out.putNull("partition");
        } else {
            out.put("partition", rec.kafkaPartition());
        }
        if (rec.timestamp() == null) {
            out.putNull("timestamp");
        } else {
            out.put("timestamp", rec.timestamp());
        }
        out.put("key", write(rec.keySchema(), rec.key(), true));
        out.put("value", write(rec.valueSchema(), rec.value(), false));
        ArrayNode headers = NODES.arrayNode();
        for (Header h : rec.headers()) {
            headers.add(NODES.arrayNode().add(h.key()).add(write(h.schema(), h.value(), false)));
        }
        out.set("headers", headers);
        return out;
    }

    @SuppressWarnings("unchecked")
    static void transform(JsonNode c, ObjectNode result) throws Exception {
        Transformation<SourceRecord> t = (Transformation<SourceRecord>) Class.forName(c.get("class").asText())
                .getDeclaredConstructor().newInstance();
        t.configure(config(c));
        ArrayNode out = NODES.arrayNode();
        for (JsonNode r : c.get("records")) {
            try {
                out.add(recordJson(t.apply(record(r))));
            } catch (Exception e) {
                out.add(NODES.objectNode().put("error", e.getClass().getName() + ": " + e.getMessage()));
            }
        }
        result.set("results", out);
    }

    @SuppressWarnings("unchecked")
    static void predicate(JsonNode c, ObjectNode result) throws Exception {
        Predicate<SourceRecord> p = (Predicate<SourceRecord>) Class.forName(c.get("class").asText())
                .getDeclaredConstructor().newInstance();
        p.configure(config(c));
        ArrayNode out = NODES.arrayNode();
        for (JsonNode r : c.get("records")) {
            out.add(p.test(record(r)));
        }
        result.set("results", out);
    }

    // --- Debezium's CloudEventsConverter --------------------------------------------------------------------
    static void cloudEvents(JsonNode c, ObjectNode result) throws Exception {
        Converter ce = (Converter) Class.forName("io.debezium.converters.CloudEventsConverter")
                .getDeclaredConstructor().newInstance();
        ce.configure(config(c), false);
        JsonConverter headerConverter = new JsonConverter();  // the seed example: header.converter=JsonConverter
        headerConverter.configure(Map.of("schemas.enable", "true", "converter.type", "header"));
        ArrayNode out = NODES.arrayNode();
        for (JsonNode r : c.get("records")) {
            try {
                SourceRecord rec = record(r);
                RecordHeaders kafkaHeaders = new RecordHeaders();
                for (Header h : rec.headers()) {
                    kafkaHeaders.add(h.key(), headerConverter.fromConnectHeader(rec.topic(), h.key(), h.schema(),
                            h.value()));
                }
                byte[] bytes = ce.fromConnectData(rec.topic(), kafkaHeaders, rec.valueSchema(), rec.value());
                out.add(bytes == null ? null : new String(bytes, StandardCharsets.UTF_8));
            } catch (Exception e) {
                out.add(NODES.objectNode().put("error", e.getClass().getName() + ": " + e.getMessage()));
            }
        }
        result.set("results", out);
    }
}
