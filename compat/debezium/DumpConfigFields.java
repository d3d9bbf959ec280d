// Prints every io.debezium.config.Field declared as a static member of the classes named on the command line,
// one per line: name, type, default value, declaring class (tab-separated). Used by compat/debezium/config_keys.py.

import io.debezium.config.Field;
import java.lang.reflect.Modifier;

public final class DumpConfigFields {
    public static void main(String[] classNames) throws Exception {
        for (String className : classNames) {
            Class<?> type = Class.forName(className, true, DumpConfigFields.class.getClassLoader());
            for (java.lang.reflect.Field member : type.getDeclaredFields()) {
                if (!Modifier.isStatic(member.getModifiers()) || member.getType() != Field.class) {
                    continue;
                }
                member.setAccessible(true);
                Field field = (Field) member.get(null);
                if (field == null) {
                    continue;
                }
                Object value = field.defaultValue();
                System.out.println(field.name() + "\t" + field.type() + "\t" + (value == null ? "" : value) + "\t"
                        + type.getSimpleName());
            }
        }
    }
}
