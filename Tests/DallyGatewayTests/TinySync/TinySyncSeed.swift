/// TinySync's own examples, from its README (seed 003), with only the `...` elisions taken
/// out so that they are JSON.
enum TinySyncSeed {
    static let request = """
        {
            "last_synced": "2014-02-14T09:12:43-0700",
            "entities": [
                {
                    "name": "post",
                    "scope": {"author_id": "52212589594cc44541000016"},
                    "created": [
                        {
                            "id": "521fa720594cc48c1d000003",
                            "author_id": "52212589594cc44541000016",
                            "updated_at": "2014-02-17T17:23:54-0700",
                            "body": "Some text in a new post..."
                        }
                    ],
                    "updated": [
                        {
                            "id": "521fa720594cc48c1d000016",
                            "author_id": "52212589594cc44541000016",
                            "updated_at": "2014-02-16T12:05:24-0700",
                            "body": "Some new text in an existing post..."
                        }
                    ],
                    "deleted": [
                      "521fa720594cc48c1d000016"
                    ]
                }
            ]
        }
        """

    static let response = """
        {
            "last_synced": "2014-02-14T09:12:43-0700",
            "entities": [
                {
                    "name": "post",
                    "scope": {"author_id": "52212589594cc44541000016"},
                    "created": [
                        {
                            "id": "521fa720594cc48c1d000042",
                            "author_id": "52212589594cc44541000016",
                            "updated_at": "2014-03-02T18:24:54-0800",
                            "body": "A post that was saved on the server"
                        }
                    ],
                    "updated": [
                    ],
                    "deleted": [
                    ],
                    "saved": [
                      "521fa720594cc48c1d000003", "521fa720594cc48c1d000016"
                    ],
                    "errors": [
                      {
                        "id": "521fa720594cc48c1d000013",
                        "field": "body",
                        "message": "Body must not be empty"
                      }
                    ]
                }
            ]
        }
        """
}
