// Runs Kafka's JsonConverter and SimpleHeaderConverter over the cases of tests/unit/converters/java_golden_cases.py
// and writes what they produce (the sections of java_golden.json). Recording tool only: see converters_golden.py.
//
//   java -cp '<kafka connect libs>/*' ConvertersGolden.java cases.json results.json
//
// A schema arrives as JsonConverter's schema JSON (read with asConnectSchema); a value as a typed tree:
// null, {"boolean"}, {"int8"|"int16"|"int32"|"int64"|"int": n}, {"float"|"double": text}, {"string"}, {"bytes": base64},
// {"decimal": text}, {"date_ms": n}, {"array": [...]}, {"map": [[k, v], ...]}, {"struct": schema, "fields": {...}}.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;

public class ConvertersGolden {
    static final ObjectMapper MAPPER = new ObjectMapper();
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    static final JsonConverter SCHEMAS = new JsonConverter();

    public static void main(String[] args) throws Exception {
        SCHEMAS.configure(Map.of("schemas.enable", "true"), false);
        JsonNode cases = MAPPER.readTree(new File(args[0]));
        ObjectNode out = NODES.objectNode();

        ObjectNode json = out.putObject("json_converter");
        for (JsonNode c : cases.get("json_converter")) {
            Map<String, Object> config = new HashMap<>();
            c.get("config").properties().forEach(e -> config.put(e.getKey(), e.getValue().asText()));
            String name = c.get("name").asText();
            try {
                JsonConverter conv = new JsonConverter();
                conv.configure(config, false);
                Schema schema = SCHEMAS.asConnectSchema(c.get("schema"));
                byte[] bytes = conv.fromConnectData("t", schema, value(c.get("value"), schema));
                json.put(name, bytes == null ? null : new String(bytes, StandardCharsets.UTF_8));
            } catch (Exception e) {
                json.set(name, error(e));
            }
        }

        SimpleHeaderConverter headers = new SimpleHeaderConverter();
        headers.configure(Map.of());
        ObjectNode written = out.putObject("simple_header_converter");
        for (JsonNode c : cases.get("simple_header_converter")) {
            String name = c.get("name").asText();
            try {
                Schema schema = SCHEMAS.asConnectSchema(c.get("schema"));
                byte[] bytes = headers.fromConnectHeader("t", "k", schema, value(c.get("value"), schema));
                written.put(name, bytes == null ? null : new String(bytes, StandardCharsets.UTF_8));
            } catch (Exception e) {
                written.set(name, error(e));
            }
        }

        ObjectNode inferred = out.putObject("header_inference");
        for (JsonNode text : cases.get("header_inference")) {
            SchemaAndValue read = headers.toConnectHeader("t", "k", text.asText().getBytes(StandardCharsets.UTF_8));
            inferred.set(text.asText(), NODES.arrayNode().add(describe(read.schema())).add(show(read.value())));
        }
        MAPPER.writeValue(new File(args[1]), out);
    }

    static JsonNode error(Exception e) {
        return NODES.objectNode().put("error", e.getClass().getSimpleName() + ":" + e.getMessage());
    }

    static String describe(Schema schema) {
        if (schema == null) {
            return "null";
        }
        String text = schema.type() + "|" + schema.name() + "|" + schema.isOptional();
        if (schema.type() == Schema.Type.ARRAY) {
            text += "|" + kind(schema.valueSchema());
        }
        if (schema.type() == Schema.Type.MAP) {
            text += "|" + kind(schema.keySchema()) + "," + kind(schema.valueSchema());
        }
        return text;
    }

    static String kind(Schema schema) {
        return schema == null ? "null" : schema.type().toString();
    }

    static String show(Object value) {
        if (value == null) {
            return "null";
        }
        String shown = value instanceof Date d ? Long.toString(d.getTime()) : value.toString();
        return value.getClass().getSimpleName() + "=" + shown;
    }

    static Object value(JsonNode node, Schema schema) {
        if (node == null || node.isNull()) {
            return null;
        }
        String kind = node.fieldNames().next();
        JsonNode v = node.get(kind);
        switch (kind) {
            case "boolean": return v.asBoolean();
            case "int8": return (byte) v.asInt();
            case "int16": return (short) v.asInt();
            case "int32": return v.asInt();
            case "int64": return v.asLong();
            case "int": return v.canConvertToInt() ? (Object) v.asInt() : (Object) v.asLong();
            case "float": return (float) Double.parseDouble(v.asText());
            case "double": return Double.parseDouble(v.asText());
            case "string": return v.asText();
            case "bytes": return Base64.getDecoder().decode(v.asText());
            case "decimal": return new BigDecimal(v.asText());
            case "date_ms": return new Date(v.asLong());
            case "array": {
                Schema items = schema == null ? null : schema.valueSchema();
                List<Object> list = new ArrayList<>();
                for (JsonNode item : v) {
                    list.add(value(item, items));
                }
                return list;
            }
            case "map": {
                Schema keys = schema == null ? null : schema.keySchema();
                Schema values = schema == null ? null : schema.valueSchema();
                Map<Object, Object> map = new LinkedHashMap<>();
                for (JsonNode entry : v) {
                    map.put(value(entry.get(0), keys), value(entry.get(1), values));
                }
                return map;
            }
            case "struct": {
                Schema structSchema = SCHEMAS.asConnectSchema(v);
                Struct struct = new Struct(structSchema);
                node.get("fields").properties().forEach(e -> struct.put(e.getKey(),
                        value(e.getValue(), structSchema.field(e.getKey()).schema())));
                return struct;
            }
            default: throw new IllegalArgumentException("unknown value kind " + kind);
        }
    }
}
