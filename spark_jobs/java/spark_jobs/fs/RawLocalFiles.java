package spark_jobs.fs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsAction;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local file system without the child processes it starts when the native Hadoop library is not loaded
 * (the library is not in Hadoop's Maven jars, so never under pyspark): a {@code chmod} for every file it creates
 * (the file and its checksum sidecar) and a {@code readlink} for every status of a possible link, which Delta's
 * log store asks for at each commit file's rename. An incremental run started 54 of them, ~6-10 ms each.
 *
 * <p>Permissions are set with {@link Files#setPosixFilePermissions} (the same bits; a sticky bit still goes
 * through Hadoop's own path), and a path that is not a symbolic link gets its plain status, as Hadoop's own code
 * gives it for one (its {@code readlink} of a {@code file:} URI string finds no link).
 */
public class RawLocalFiles extends RawLocalFileSystem {
    @Override
    public void setPermission(Path path, FsPermission permission) throws IOException {
        if (permission.getStickyBit()) {
            super.setPermission(path, permission);
            return;
        }
        Set<PosixFilePermission> bits = EnumSet.noneOf(PosixFilePermission.class);
        add(bits, permission.getUserAction(), PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
            PosixFilePermission.OWNER_EXECUTE);
        add(bits, permission.getGroupAction(), PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.GROUP_EXECUTE);
        add(bits, permission.getOtherAction(), PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE,
            PosixFilePermission.OTHERS_EXECUTE);
        Files.setPosixFilePermissions(pathToFile(path).toPath(), bits);
    }

    @Override
    public FileStatus getFileLinkStatus(Path path) throws IOException {
        if (Files.isSymbolicLink(pathToFile(path).toPath())) {
            return super.getFileLinkStatus(path);
        }
        return getFileStatus(path);
    }

    private static void add(Set<PosixFilePermission> bits, FsAction action, PosixFilePermission read,
                            PosixFilePermission write, PosixFilePermission execute) {
        if (action.implies(FsAction.READ)) {
            bits.add(read);
        }
        if (action.implies(FsAction.WRITE)) {
            bits.add(write);
        }
        if (action.implies(FsAction.EXECUTE)) {
            bits.add(execute);
        }
    }
}
