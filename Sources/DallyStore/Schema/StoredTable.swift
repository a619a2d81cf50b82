import DallyCore
import GRDB

/// The SQL a store needs to create one configured table or add a column to it.
package protocol StoredTable {
    var schema: TableSchema { get }
    var createStatements: [String] { get }
    func addColumnStatement(_ column: DallyCore.Column) -> String
}
