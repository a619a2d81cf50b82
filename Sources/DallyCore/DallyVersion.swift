/// The version of this build of Dally, as `dally --version` prints it and the servers log at
/// start. Bumped by hand at each release (see docs/OPERATIONS.md, upgrades).
public enum DallyVersion {
    public static let current = "0.9.0"
}
