import org.apache.kafka.connect.runtime.distributed.*;
import org.apache.kafka.connect.util.ConnectorTaskId;
import java.nio.ByteBuffer;
String hex(ByteBuffer b) { var sb = new StringBuilder(); while (b.hasRemaining()) sb.append(String.format("%02x", b.get())); return sb.toString(); }
System.out.println("META " + hex(ConnectProtocol.serializeMetadata(new ExtendedWorkerState("http://127.0.0.1:8083/", 42L, null))));
var a = new ExtendedAssignment((short)0, (short)0, "connect-1-abc", "http://127.0.0.1:8083/", 7L, List.of("alpha", "beta"), List.of(new ConnectorTaskId("alpha", 0), new ConnectorTaskId("beta", 0), new ConnectorTaskId("alpha", 1)), List.of(), List.of(), 0);
System.out.println("ASSIGN " + hex(ConnectProtocol.serializeAssignment(a)));
var m = new ExtendedAssignment((short)0, (short)1, "connect-1-abc", "http://127.0.0.1:8083/", 9L, List.of(), List.of(), List.of(), List.of(), 0);
System.out.println("MISMATCH " + hex(ConnectProtocol.serializeAssignment(m)));
/exit
